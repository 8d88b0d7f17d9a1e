/**
 * The seed's root cause through the kube simulator: two Argo CD Applications own Namespace myapp
 * (docs/incident.md, step 1). `ns` names both with their sync settings and makes it the last step, after
 * recovery; without permission to read Applications it says so and still diagnoses.
 */
import { nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { afterEach, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { renderText } from "../../../src/render/text.js";
import { startWorld, type World } from "../../sim/world.js";

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe("ns reports Argo CD double ownership", () => {
  it("names both Applications that own Namespace myapp, last in the next steps", async () => {
    world = await startWorld({ scenario: "test/fixtures/scenarios/seed-incident.yaml", lbc: false });
    const d = await diagnoseNamespace(createKubeAdapter(world.kube.kubeconfig()), "myapp", {
      now: () => new Date(),
    });
    expect(d.argo?.namespaceOwners.map((a) => a.app)).toEqual(["argocd/myapp-api", "argocd/myapp-worker"]);
    expect(d.argo?.warnings[0]?.message).toContain("Namespace/myapp is part of applications");
    expect(nextStepTexts(d).at(-1)).toMatch(
      /^Root cause to fix after recovery: 2 Argo CD Applications manage Namespace myapp/,
    );
    expect(renderText({ type: "diagnosis", diagnosis: d })).toContain(
      "argocd/myapp-api: auto-sync + prune + self-heal — manages the Namespace itself",
    );
  });

  it("without RBAC on Applications: a named warning, the rest of the diagnosis intact", async () => {
    world = await startWorld({ scenario: "test/fixtures/scenarios/seed-incident.yaml", lbc: false });
    world.kube.setFaults({ forbid: [{ resource: "applications", group: "argoproj.io", verb: "list" }] });
    const d = await diagnoseNamespace(createKubeAdapter(world.kube.kubeconfig()), "myapp", {
      now: () => new Date(),
    });
    expect(d.argo).toBeUndefined();
    expect(d.warnings.join("\n")).toMatch(/Could not list Argo CD Applications/);
    expect(d.blockers.map((b) => b.name)).toContain("myapp-worker-ingress");
  });
});
