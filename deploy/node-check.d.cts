/** Types of `node-check.cjs` (plain CommonJS, so any old Node runs it) for the tests that import it. */
/** The one line to print when `version` is older than the `>=` range `range`, else null. */
export declare function nodeCheck(name: string, version: string, range: string | undefined): string | null;
/** The minimum a `>=X[.Y[.Z]]` range names, as written; null for any other range. */
export declare function minimumOf(range: string | undefined): string | null;
