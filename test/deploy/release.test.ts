/**
 * The release workflow (.github/workflows/release.yml) against what the rest of the repository
 * promises: it builds the Dockerfile for both architectures with the build arguments the Dockerfile
 * declares, attaches provenance and an SBOM, signs the image and the chart, pushes the chart as an
 * OCI artefact, and refuses a tag that is not the version package.json and the chart carry. (The
 * workflow's syntax is checked against GitHub's schema by `npm run lint`.)
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseDockerfile } from "./dockerfile.js";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

describe("the release workflow", () => {
  it("publishes a signed multi-arch image with provenance and SBOM, and a signed OCI chart, from a tag of the package's version", async () => {
    const wf = parse(await readFile(".github/workflows/release.yml", "utf8")) as {
      on: { push: { tags: string[] } };
      permissions: Record<string, string>;
      jobs: Record<string, { steps: Step[] }>;
    };
    expect(wf.on.push.tags).toEqual(["v*.*.*"]);
    // Keyless signing needs the OIDC token; pushing needs packages.
    expect(wf.permissions).toMatchObject({ "id-token": "write", packages: "write" });
    const steps = Object.values(wf.jobs).flatMap((j) => j.steps);
    const run = steps.map((s) => s.run ?? "").join("\n");

    // The tests run first, as CI runs them.
    expect(run).toContain("bash .ci/run");
    const build = steps.find((s) => s.uses?.startsWith("docker/build-push-action@"));
    expect(build?.with).toMatchObject({ platforms: "linux/amd64,linux/arm64", push: true, sbom: true });
    expect(build?.with?.["provenance"]).toBe("mode=max");
    // Every build argument it passes is one the Dockerfile's final stage declares.
    const stages = parseDockerfile(await readFile("Dockerfile", "utf8"));
    const declared = (stages.at(-1)?.instructions ?? [])
      .filter((i) => i.op === "ARG")
      .map((i) => i.args.split("=")[0]);
    const args = build?.with?.["build-args"];
    const passed = (typeof args === "string" ? args : "")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => l.trim().split("=")[0]);
    expect(passed.sort()).toEqual(["REVISION", "SOURCE", "VERSION"]);
    for (const arg of passed) expect(declared).toContain(arg);

    expect(run).toMatch(/cosign sign --yes "\$REF"/);
    expect(run).toMatch(/cosign attest --yes --type cyclonedx --predicate dist\/sbom\.cdx\.json/);
    expect(run).toMatch(/helm push "unstuck-\$VERSION\.tgz" "\$CHARTS"/);
    expect(run).toMatch(/cosign sign --yes "\$\{CHARTS#oci:\/\/\}\/unstuck@\$digest"/);
  });

  it("can release the current version: package.json and the chart carry the same one", async () => {
    const pkg = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
    const chart = parse(await readFile("deploy/chart/unstuck/Chart.yaml", "utf8")) as {
      version: string;
      appVersion: string;
    };
    expect(chart.version).toBe(pkg.version);
    expect(chart.appVersion).toBe(pkg.version);
    const stages = parseDockerfile(await readFile("Dockerfile", "utf8"));
    const version = (stages.at(-1)?.instructions ?? []).find(
      (i) => i.op === "ARG" && i.args.startsWith("VERSION="),
    );
    expect(version?.args).toBe(`VERSION=${pkg.version}`);
  });
});
