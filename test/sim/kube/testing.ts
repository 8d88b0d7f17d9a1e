/**
 * Helpers for tests that drive the simulator with the real kubectl: each run gets the given
 * kubeconfig and its own discovery cache dir, so types created by one test never go stale in another.
 */
import { execFile } from "node:child_process";

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the real `kubectl` (never throws on a non-zero exit; the result carries it). */
export function kubectl(
  kubeconfigPath: string,
  cacheDir: string,
  args: readonly string[],
  input?: string,
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      "kubectl",
      ["--kubeconfig", kubeconfigPath, "--cache-dir", cacheDir, ...args],
      { timeout: 20_000, env: { ...process.env, KUBECTL_KUBERC: "false" } },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === "number" ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}
