/**
 * The one rule both executors decide by after a failed write: re-read (ambiguous: it may have been
 * applied) or give up (refused: nothing written). Errors as the two adapters map them: the
 * Kubernetes adapter's (the finalizer patch) and the AWS adapter's (the repoint writes).
 */
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { isAmbiguous } from "../../../src/actions/ambiguous.js";
import { mapAwsError } from "../../../src/aws/sdk-calls.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { mapKubeError } from "../../../src/kube/errors.js";

const ctx = {
  verb: "patch",
  resource: "ingresses",
  group: "networking.k8s.io",
  namespace: "myapp",
  name: "web",
};

function kube(err: unknown): UnstuckError {
  return mapKubeError(err, ctx, "https://kube.example:6443", 10_000);
}

function api(status: number): ApiException<string> {
  return new ApiException(status, `HTTP ${String(status)}`, JSON.stringify({ message: "refused" }), {});
}

function aws(name: string, httpStatusCode?: number, extra: Record<string, unknown> = {}): UnstuckError {
  const err = Object.assign(new Error(`${name} happened`), {
    name,
    ...(httpStatusCode !== undefined ? { $metadata: { httpStatusCode } } : {}),
    ...extra,
  });
  return mapAwsError(err, "route53:ChangeResourceRecordSets");
}

describe("isAmbiguous: may the failed write have been applied?", () => {
  it("anything not coded by an adapter is ambiguous", () => {
    expect(isAmbiguous(new Error("boom"))).toBe(true);
    expect(isAmbiguous("a string")).toBe(true);
    expect(isAmbiguous(undefined)).toBe(true);
  });

  describe("Kubernetes adapter errors (the finalizer patch)", () => {
    it.each([500, 502, 503, 504])("HTTP %i is ambiguous", (status) => {
      const err = kube(api(status));
      expect(err.code).toBe(ErrorCode.Upstream);
      expect(isAmbiguous(err)).toBe(true);
    });

    it("no answer before the request's deadline is ambiguous", () => {
      const err = kube(Object.assign(new Error("aborted"), { name: "TimeoutError" }));
      expect(err.code).toBe(ErrorCode.Upstream);
      expect(isAmbiguous(err)).toBe(true);
    });

    it("a reset or closed connection is ambiguous", () => {
      expect(isAmbiguous(kube(Object.assign(new Error("socket"), { code: "ECONNRESET" })))).toBe(true);
      expect(isAmbiguous(kube(new TypeError("fetch failed")))).toBe(true);
      expect(isAmbiguous(kube(new Error("something odd")))).toBe(true);
    });

    it.each([400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 429])(
      "a refusal with HTTP %i is not ambiguous",
      (status) => {
        expect(isAmbiguous(kube(api(status)))).toBe(false);
      },
    );

    it("Internal (a fake or a bug mid-call) is ambiguous", () => {
      expect(isAmbiguous(new UnstuckError(ErrorCode.Internal, "not supported"))).toBe(true);
    });
  });

  describe("AWS adapter errors (the repoint writes)", () => {
    it.each([
      ["InternalFailure", 500],
      ["ServiceUnavailable", 503],
      ["RequestTimeout", 400],
      ["InvalidInput", 400],
      ["NoSuchDistribution", 404],
      ["UnknownError", undefined],
    ])("an unclassified AWS error (%s, HTTP %s) is ambiguous", (name, status) => {
      const err = aws(name, status);
      expect(err.code).toBe(ErrorCode.Upstream);
      expect(isAmbiguous(err)).toBe(true);
    });

    it("the call deadline is ambiguous", () => {
      expect(isAmbiguous(aws("TimeoutError"))).toBe(true);
    });

    it("an unreachable endpoint is ambiguous", () => {
      const err = aws("Error", undefined, { code: "ECONNRESET" });
      expect(err.code).toBe(ErrorCode.Unreachable);
      expect(isAmbiguous(err)).toBe(true);
    });

    it("the adapter's own Upstream errors without a status are ambiguous", () => {
      expect(isAmbiguous(new UnstuckError(ErrorCode.Upstream, "CloudFront returned no config"))).toBe(true);
    });

    it.each([
      ["AccessDenied", 403, ErrorCode.Forbidden],
      ["Throttling", 400, ErrorCode.Throttled],
      ["CredentialsProviderError", undefined, ErrorCode.Unauthorized],
    ])("a refusal (%s) is not ambiguous", (name, status, code) => {
      const err = aws(name, status);
      expect(err.code).toBe(code);
      expect(isAmbiguous(err)).toBe(false);
    });

    it("a conditional write refused as stale is not ambiguous", () => {
      const err = new UnstuckError(ErrorCode.Stale, "InvalidChangeBatch", { awsError: "InvalidChangeBatch" });
      expect(isAmbiguous(err)).toBe(false);
    });
  });
});
