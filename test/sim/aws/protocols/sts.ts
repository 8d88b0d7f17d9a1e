/**
 * AWS STS over the `query` protocol (API 2011-06-15): form POST in, `<{Op}Response><{Op}Result>`
 * out, in STS's namespace. `AssumeRole` hands out temporary credentials of the role's account;
 * `GetCallerIdentity` says whose a key is.
 */
import type { AwsAccounts } from "../accounts.js";
import { AwsApiError } from "../errors.js";
import { escapeXml, writeXml, type XmlValue } from "../xml.js";
import { formInt, type ServiceRequest, type ServiceResult } from "./common.js";

const NS = "https://sts.amazonaws.com/doc/2011-06-15/";

/** The query-protocol error envelope, as STS writes it. */
export function stsErrorBody(err: AwsApiError, requestId: string): string {
  return `<ErrorResponse xmlns="${NS}"><Error><Type>${err.type}</Type><Code>${escapeXml(err.code)}</Code><Message>${escapeXml(err.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
}

function respond(action: string, result: Record<string, XmlValue>, requestId: string): ServiceResult {
  const inner = Object.entries(result)
    .map(([k, v]) => writeXml(k, v, () => "member"))
    .join("");
  return {
    body: `<${action}Response xmlns="${NS}"><${action}Result>${inner}</${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`,
  };
}

/** STS's timestamps: ISO 8601 without milliseconds. */
function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function handleSts(accounts: AwsAccounts, req: ServiceRequest, accessKeyId: string): ServiceResult {
  const { form, requestId } = req;
  switch (req.action) {
    case "AssumeRole": {
      const roleArn = form.get("RoleArn");
      const sessionName = form.get("RoleSessionName");
      if (roleArn === undefined || sessionName === undefined) {
        const missing = roleArn === undefined ? "RoleArn" : "RoleSessionName";
        throw new AwsApiError("MissingParameter", `The request must contain the parameter ${missing}`, 400);
      }
      const externalId = form.get("ExternalId");
      const durationSeconds = formInt(form, "DurationSeconds");
      const s = accounts.assumeRole(accessKeyId, {
        roleArn,
        sessionName,
        ...(externalId !== undefined ? { externalId } : {}),
        ...(durationSeconds !== undefined ? { durationSeconds } : {}),
      });
      return respond(
        "AssumeRole",
        {
          AssumedRoleUser: { AssumedRoleId: s.assumedRoleId, Arn: s.arn },
          Credentials: {
            AccessKeyId: s.accessKeyId,
            SecretAccessKey: s.secretAccessKey,
            SessionToken: s.sessionToken,
            Expiration: isoSeconds(s.expiration),
          },
        },
        requestId,
      );
    }
    case "GetCallerIdentity": {
      const session = accounts.session(accessKeyId);
      const world = accounts.worldOf(accessKeyId);
      const identity = world.identityFor(accessKeyId);
      return respond(
        "GetCallerIdentity",
        {
          UserId: session?.assumedRoleId ?? identity.principalId,
          Account: world.accountId,
          Arn: session?.arn ?? identity.arn,
        },
        requestId,
      );
    }
    default:
      throw new AwsApiError(
        "InvalidAction",
        `Could not find operation ${req.action} for version 2011-06-15`,
        400,
      );
  }
}
