import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
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

  it("refuses a given kubeconfig without a usable current context instead of guessing localhost", () => {
    expect(() =>
      loadKubeConfig({ text: "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n" }),
    ).toThrow(/has no usable current context/);
  });

  it("merges a KUBECONFIG list in order and skips missing files, as kubectl does", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unstuck-kc-"));
    const config = (name: string, server: string) =>
      `apiVersion: v1\nkind: Config\ncurrent-context: ${name}\nclusters: [{name: ${name}, cluster: {server: "${server}"}}]\n` +
      `contexts: [{name: ${name}, context: {cluster: ${name}, user: ${name}}}]\nusers: [{name: ${name}, user: {token: t}}]\n`;
    await writeFile(join(dir, "a"), config("a", "https://a.example:6443"));
    await writeFile(join(dir, "b"), config("b", "https://b.example:6443"));
    const kc = loadKubeConfig({
      path: [join(dir, "missing"), join(dir, "a"), join(dir, "b")].join(delimiter),
    });
    expect(kc.getCurrentCluster()?.server).toBe("https://a.example:6443");
    expect(
      kc
        .getContexts()
        .map((c) => c.name)
        .sort(),
    ).toEqual(["a", "b"]);
  });
});
