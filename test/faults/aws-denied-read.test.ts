/**
 * Unknown is not "none" (issue: a denied read became a false conclusion). With
 * `ec2:DescribeNetworkInterfaces` denied on the seed world, the diagnosis must not claim that no
 * dependent remains or that the controller's next retry should succeed: it names the missing IAM
 * action and what could not be read, and offers no fix for a dependent it never saw.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAwsAdapter } from "../../src/aws/sdk-adapter.js";
import { diagnoseNamespace } from "../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { renderText } from "../../src/render/text.js";
import { openAwsWorld, type AwsWorld } from "../integration/helpers/aws-world.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

describe("a denied AWS read never becomes a conclusion", () => {
  it("DescribeNetworkInterfaces denied: the blocker is unknown, the action is named, nothing claims success", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    w.aws.setFaults({ deny: ["DescribeNetworkInterfaces"] });
    const d = await diagnoseNamespace(createKubeAdapter(w.kube.kubeconfig()), "myapp", {
      now: () => new Date(),
      aws: { port: createAwsAdapter(c) },
    });
    const aws = d.blockers.find((b) => b.name === "myapp-worker-ingress")?.aws;
    expect(aws?.problems.join(" ")).toContain("ec2:DescribeNetworkInterfaces");
    expect(aws?.summary).toMatch(/could not be fully read/);
    const said = renderText({ type: "diagnosis", diagnosis: d });
    expect(said).not.toMatch(/next retry should succeed|no dependent remains/i);
    expect(said).not.toMatch(/delete-network-interface/);
    // Forcing is not declared unnecessary on the strength of a read that failed.
    expect(aws?.forceAdvised).toBe(true);
  });
});
