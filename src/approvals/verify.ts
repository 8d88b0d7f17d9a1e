/**
 * The executor's check of an approval record before any write: it trusts nothing the store says
 * about state or votes, and re-derives the approval from what the bot itself signed.
 *
 * A record passes only when
 * - the request document's MAC verifies and names this id (so an edited plan, target or
 *   requester fails);
 * - the state it was claimed from (APPROVED, or EXECUTING when resuming) carries a valid MAC;
 * - its votes include at least `approvalsRequired` approvals, each with a valid MAC bound to this
 *   request (a vote copied from another request, or its MAC, fails), cast within the request's
 *   lifetime, by distinct approvers on the current approver list, none of them the requester,
 *   from the requester's team and the request's channel; and no valid deny;
 * - the stored patch is exactly the one the precondition and the finalizers to remove imply;
 * - the requester's statements (in the document, so bound by its MAC) are the form's own words.
 *
 * A refusal says why: `tampered` when something was written past the bot (a MAC that does not
 * verify under the key it names, a plan or state the bot never signed), `retired-key` when every MAC
 * that fails names a key the bot no longer holds (neither `UNSTUCK_APPROVAL_KEY` nor
 * `UNSTUCK_APPROVAL_KEY_PREVIOUS`) and nothing else is wrong: a key rotation, not an intruder.
 */
import { buildFinalizerPatch } from "../kube/finalizer-patch.js";
import { ApprovalSigner } from "./integrity.js";
import type { ApprovalRequest, RepointPathAction } from "./types.js";
import { areKnownStatements } from "./types.js";

/** A state as stored with its transition time and MAC. */
export interface SignedState {
  readonly state: string;
  readonly at: string;
  readonly mac: string;
}

/** A request with the raw material its MACs cover, for verification. */
export interface SignedRecord {
  readonly request: ApprovalRequest;
  /** The stored document, byte for byte. */
  readonly doc: string;
  readonly docMac: string;
  readonly state: SignedState;
}

/** Why a record cannot be trusted: edited outside the bot, or signed with a key it no longer holds. */
export type RefusalCause = "tampered" | "retired-key";

export type Verification =
  | { readonly ok: true; readonly approvers: readonly string[] }
  | {
      readonly ok: false;
      readonly problems: readonly string[];
      readonly cause: RefusalCause;
      /** The key ids of the retired keys its MACs name (for the message and the audit log). */
      readonly retiredKeyIds: readonly string[];
    };

export interface VerifyInput {
  readonly id: string;
  readonly record: SignedRecord;
  /** The state the executor claimed the request from, as stored before the claim. */
  readonly prior: SignedState;
  readonly signer: ApprovalSigner;
  /** User ids on the approver list now (user groups resolved live). */
  readonly approvers: ReadonlySet<string>;
}

/** A repoint plan whose Route 53 batches are DELETE/CREATE pairs of one record and whose origins change. */
function wellFormedRepoint(action: RepointPathAction): boolean {
  return action.steps.every((step) => {
    if (step.kind === "cloudfront-origin") return step.from !== step.to && step.etag !== "";
    if (step.changes.length === 0 || step.changes.length % 2 !== 0) return false;
    for (let i = 0; i < step.changes.length; i += 2) {
      const del = step.changes[i];
      const create = step.changes[i + 1];
      if (del?.action !== "DELETE" || create?.action !== "CREATE") return false;
      if (del.record.name !== create.record.name || del.record.type !== create.record.type) return false;
      if ((del.record.setIdentifier ?? "") !== (create.record.setIdentifier ?? "")) return false;
    }
    return true;
  });
}

/** The ids a clean-up may name: load balancer and target group ARNs, interface and group ids. */
const ORPHAN_ID = {
  LoadBalancer:
    /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:loadbalancer\/(app|net)\/[A-Za-z0-9-]+\/[0-9a-f]+$/,
  TargetGroup:
    /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:targetgroup\/[A-Za-z0-9-]+\/[0-9a-f]+$/,
  SecurityGroup: /^sg-[0-9a-f]{8,17}$/,
} as const;

function samePatch(request: ApprovalRequest): boolean {
  const action = request.action;
  if (action.type === "repoint-path") return wellFormedRepoint(action);
  if (action.type === "open-deletion-guard") {
    // Nothing derived to compare: the plan must name one namespace as it was read, and a window.
    return (
      /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(action.namespace) &&
      action.precondition.uid !== "" &&
      action.precondition.resourceVersion !== "" &&
      Number.isInteger(action.windowSeconds) &&
      action.windowSeconds > 0 &&
      action.windowSeconds <= 86_400
    );
  }
  if (action.type === "delete-orphans") {
    return action.resources.length > 0 && action.resources.every((r) => ORPHAN_ID[r.type].test(r.id));
  }
  if (!action.remove.every((f) => action.precondition.finalizers.includes(f))) return false;
  return (
    JSON.stringify(action.patch) === JSON.stringify(buildFinalizerPatch(action.precondition, action.remove))
  );
}

/** The cause of a record's refusal, from what failed. */
function refusal(
  problems: readonly string[],
  tampered: boolean,
  retired: ReadonlySet<string>,
): Extract<Verification, { ok: false }> {
  return {
    ok: false,
    problems,
    cause: !tampered && retired.size > 0 ? "retired-key" : "tampered",
    retiredKeyIds: [...retired].sort(),
  };
}

function retiredProblem(what: string, keyId: string | undefined): string {
  return `${what} was signed with a retired approval key (key id ${keyId ?? "?"}: neither UNSTUCK_APPROVAL_KEY nor UNSTUCK_APPROVAL_KEY_PREVIOUS)`;
}

export function verifyApproval(input: VerifyInput): Verification {
  const { id, record, prior, signer, approvers } = input;
  const { request, doc, docMac } = record;
  const problems: string[] = [];
  const retired = new Set<string>();
  /** Records the key id of a MAC that failed because its key is retired; false for any other failure. */
  const isRetired = (mac: unknown): boolean => {
    if (signer.keyOf(mac) !== "retired") return false;
    retired.add(ApprovalSigner.keyIdOf(mac) ?? "?");
    return true;
  };
  if (!signer.verifyRequest(id, doc, docMac) || request.id !== id) {
    // Nothing else in the record can be trusted once the document does not verify.
    if (request.id === id && isRetired(docMac)) {
      return refusal([retiredProblem("the request", ApprovalSigner.keyIdOf(docMac))], false, retired);
    }
    return refusal(["the request document's MAC does not verify (plan or target edited)"], true, retired);
  }
  let tampered = false;
  if (prior.state !== "APPROVED" && prior.state !== "EXECUTING") {
    problems.push(`it was claimed from state ${prior.state || "(none)"}`);
    tampered = true;
  } else if (!signer.verifyState(id, docMac, prior.state, prior.at, prior.mac)) {
    if (isRetired(prior.mac)) {
      problems.push(retiredProblem(`its ${prior.state} state`, ApprovalSigner.keyIdOf(prior.mac)));
    } else {
      problems.push(`its ${prior.state} state was not recorded by the bot (state MAC does not verify)`);
      tampered = true;
    }
  }
  if (!samePatch(request)) {
    problems.push("its patch is not the one its precondition implies");
    tampered = true;
  }
  if (request.statements !== undefined && !areKnownStatements(request.statements)) {
    problems.push("its requester statements are not the ones the form asks for");
    tampered = true;
  }

  const created = Date.parse(request.createdAt);
  const expires = Date.parse(request.expiresAt);
  const counted = new Set<string>();
  let forged = 0;
  let retiredVotes = 0;
  let denied = false;
  for (const vote of request.votes) {
    if (vote.requestId !== id || !signer.verifyVote(docMac, vote)) {
      if (vote.requestId === id && isRetired(vote.mac)) retiredVotes++;
      else forged++;
      continue;
    }
    if (vote.decision === "deny") {
      denied = true;
      continue;
    }
    const at = Date.parse(vote.at);
    const eligible =
      vote.decision === "approve" &&
      vote.voter.userId !== request.requester.userId &&
      vote.voter.teamId === request.requester.teamId &&
      (vote.channelId === undefined || vote.channelId === request.channelId) &&
      approvers.has(vote.voter.userId) &&
      Number.isFinite(at) &&
      at >= created &&
      at < expires;
    if (eligible) counted.add(vote.voter.userId);
  }
  if (forged > 0) {
    problems.push(`${forged} vote(s) carry no valid MAC for this request`);
    tampered = true;
  }
  if (retiredVotes > 0) problems.push(`${retiredVotes} vote(s) were signed with a retired approval key`);
  if (denied) {
    problems.push("it carries a deny vote");
    tampered = true;
  }
  if (counted.size < request.approvalsRequired) {
    // A consequence of the failures above, or of a changed approver list: neither cause on its own.
    problems.push(
      `only ${counted.size} of the ${request.approvalsRequired} required approval(s) verify as signed votes by eligible approvers`,
    );
    if (retired.size === 0) tampered = true;
  }
  return problems.length > 0
    ? refusal(problems, tampered, retired)
    : { ok: true, approvers: [...counted].sort() };
}

/** Whether a request can still be acted on, as far as its signatures go (checked before a vote). */
export type IntegrityCheck =
  { readonly ok: true } | { readonly ok: false; readonly cause: RefusalCause; readonly problem: string };

/**
 * The request document and its current state verify under a key the bot holds. A vote on a record
 * that fails could never lead to an execution: the workflow refuses it with this reason.
 */
export function verifyIntegrity(id: string, record: SignedRecord, signer: ApprovalSigner): IntegrityCheck {
  const { request, doc, docMac, state } = record;
  const check = (mac: unknown, what: string, problem: string): IntegrityCheck => {
    if (signer.keyOf(mac) === "retired") {
      return { ok: false, cause: "retired-key", problem: retiredProblem(what, ApprovalSigner.keyIdOf(mac)) };
    }
    return { ok: false, cause: "tampered", problem };
  };
  if (request.id !== id || !signer.verifyRequest(id, doc, docMac)) {
    return request.id === id
      ? check(docMac, "it", "its request document does not verify (plan or target edited outside the bot)")
      : { ok: false, cause: "tampered", problem: "its record names another request" };
  }
  if (!signer.verifyState(id, docMac, state.state, state.at, state.mac)) {
    return check(
      state.mac,
      `its ${state.state} state`,
      `its ${state.state} state was not recorded by the bot`,
    );
  }
  return { ok: true };
}
