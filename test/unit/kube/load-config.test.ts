import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../../src/errors.js";
import { loadKubeConfig } from "../../../src/kube/client-node-adapter.js";

describe("loadKubeConfig", () => {
  it("names the unreadable file and the variable", () => {
    expect(() => loadKubeConfig({ path: "/nonexistent/kubeconfig" })).toThrow(
      expect.objectContaining({
        code: ErrorCode.Config,
        message: expect.stringContaining("/nonexistent/kubeconfig"),
      }),
    );
  });

  it("refuses text that is not a kubeconfig", () => {
    expect(() => loadKubeConfig({ text: "clusters: [" })).toThrow(
      expect.objectContaining({ code: ErrorCode.Config }),
    );
  });

  it("refuses a kubeconfig without a current cluster instead of guessing localhost", () => {
    expect(() =>
      loadKubeConfig({ text: "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n" }),
    ).toThrow(/No Kubernetes configuration found/);
  });
});
