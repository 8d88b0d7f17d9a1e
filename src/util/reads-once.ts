/**
 * Each distinct read made once: a read is its name and its arguments (as JSON), and every later ask
 * of the same read shares its answer, or its failure. What a diagnosis asks ahead of need is then
 * what its later asks get. Kept as long as the returned function is (one diagnosis).
 */
export type ReadOnce = <A extends unknown[], R>(
  name: string,
  read: (...args: A) => Promise<R>,
) => (...args: A) => Promise<R>;

export function readsOnce(): ReadOnce {
  const made = new Map<string, Promise<unknown>>();
  return <A extends unknown[], R>(name: string, read: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      const key = `${name} ${JSON.stringify(args)}`;
      let answer = made.get(key) as Promise<R> | undefined;
      if (answer === undefined) {
        answer = read(...args);
        // Its callers see a failure; a read ahead that nobody waits for is not left unhandled.
        answer.catch(() => undefined);
        made.set(key, answer);
      }
      return answer;
    };
}

/** The distinct reads noted, each once (by its name and arguments), in the order first noted. */
export interface NotedReads<R> {
  readonly note: (name: string, args: readonly unknown[], read: R) => void;
  readonly all: () => R[];
}

export function notedReads<R>(): NotedReads<R> {
  const noted = new Map<string, R>();
  return {
    note: (name, args, read) => {
      const key = `${name} ${JSON.stringify(args)}`;
      if (!noted.has(key)) noted.set(key, read);
    },
    all: () => [...noted.values()],
  };
}
