import { describe, expect, it } from "vitest";
import { callerName } from "../../../src/diagnosis/analyze.js";

describe("callerName: who CloudTrail says made a call, as a person names it", () => {
  it("the role of an assumed-role session, without its session name", () => {
    expect(
      callerName(
        "arn:aws:sts::123456789012:assumed-role/prod-eks-myapp-aws-load-balancer-controller/1770885529118273645",
      ),
    ).toBe("role prod-eks-myapp-aws-load-balancer-controller");
    expect(callerName("arn:aws-cn:sts::123456789012:assumed-role/lbc/x")).toBe("role lbc");
  });

  it("a user by name; anything else as given", () => {
    expect(callerName("arn:aws:iam::123456789012:user/ops/alice")).toBe("user ops/alice");
    expect(callerName("elasticloadbalancing.amazonaws.com")).toBe("elasticloadbalancing.amazonaws.com");
  });
});
