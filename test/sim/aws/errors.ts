/**
 * An error the simulated service returns. `code` is the wire code exactly as the real service writes
 * it (`DependencyViolation`, `InvalidGroup.NotFound`, `PreconditionFailed`, …); the protocol layer
 * wraps it in the right envelope.
 */
export class AwsApiError extends Error {
  public readonly code: string;
  public readonly status: number;
  public readonly type: "Sender" | "Receiver";

  public constructor(code: string, message: string, status = 400) {
    super(message);
    this.name = "AwsApiError";
    this.code = code;
    this.status = status;
    this.type = status >= 500 ? "Receiver" : "Sender";
  }
}
