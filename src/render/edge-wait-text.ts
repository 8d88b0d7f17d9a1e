/**
 * The words of an edge wait's status message: the waits (src/jobs/edge-waits.ts) say what happened
 * as a typed event — started, still waiting, done, at the deadline, a check that failed — and this
 * renders it; the surface that posts it escapes it as foreign text.
 */
import { changeIdOf, type EdgeWaitTarget, type Look } from "../edge/edge-wait.js";
import type { ResolveResult } from "../net/port.js";

/** One state of an edge wait, for its status message. */
export type EdgeWaitStatus =
  /** Started, before its first look. */
  /** A look that shows the target not reached yet. */
  | {
      readonly kind: "waiting";
      readonly target: EdgeWaitTarget;
      readonly look: Look;
      readonly elapsed: string;
      readonly check: number;
      readonly nextIn: string;
    }
  /** A look that shows the target reached. */
  | { readonly kind: "done"; readonly target: EdgeWaitTarget; readonly look: Look; readonly after: string }
  /** At the deadline, the target still not reached (`when`: `(08:12:00Z, after 45m00s)`). */
  | {
      readonly kind: "timed-out";
      readonly target: EdgeWaitTarget;
      readonly look: Look;
      readonly when: string;
    }
  /** A look that failed; the wait tries again. */
  | {
      readonly kind: "check-failed";
      readonly target: EdgeWaitTarget;
      readonly check: number;
      readonly message: string;
      readonly retryIn: string;
    }
  /** At the deadline, and the last look failed. */
  | {
      readonly kind: "unconfirmed";
      readonly target: EdgeWaitTarget;
      readonly when: string;
      readonly message: string;
    }
  /** A look that can never succeed (the distribution does not exist, a permission is missing). */
  | { readonly kind: "cannot-check"; readonly target: EdgeWaitTarget; readonly message: string };

export function renderEdgeWaitStatus(e: EdgeWaitStatus): string {
  const target = e.target;
  switch (e.kind) {
    case "waiting":
      return `⏳ ${seenText(target, e.look)} for ${e.elapsed} (check ${String(e.check)}, next in ${e.nextIn})`;
    case "done":
      return doneText(target, e.look, e.after);
    case "timed-out":
      return timedOutText(target, e.look, e.when);
    case "check-failed":
      return `⏳ ${edgeWaitSubject(target)}: check ${String(e.check)} failed (${e.message}); retrying in ${e.retryIn}.`;
    case "unconfirmed":
      return `⌛ ${edgeWaitSubject(target)}: could not confirm by the deadline ${e.when}; last check failed: ${e.message}`;
    case "cannot-check":
      return `❌ ${edgeWaitSubject(target)} cannot be checked: ${e.message}`;
  }
}

/** How a wait names its target: `CloudFront E2…`, `Route 53 change C0…`, a name, a host. */
export function edgeWaitSubject(target: EdgeWaitTarget): string {
  switch (target.kind) {
    case "cloudfront-deployed":
      return `CloudFront ${target.distributionId}`;
    case "route53-insync":
      return `Route 53 change ${changeIdOf(target.changeId)}`;
    case "dns-nxdomain":
      return nameOf(target);
    case "http-ok":
      return hostOf(target.url);
  }
}

/** What a look shows while waiting: `CloudFront E2… is InProgress`, `test.example.com answers 502 (GET …)`. */
function seenText(target: EdgeWaitTarget, look: Look): string {
  switch (target.kind) {
    case "cloudfront-deployed":
      return `CloudFront ${target.distributionId} is ${statusOf(target, look)}`;
    case "route53-insync":
      return `Route 53 change ${changeIdOf(target.changeId)}${zoneOf(target)} is ${statusOf(target, look)}`;
    case "dns-nxdomain":
      return `${nameOf(target)} ${resolvedText(answerOf(target, look))}`;
    case "http-ok":
      return `${hostOf(target.url)} ${httpText(target, look)}`;
  }
}

function doneText(target: EdgeWaitTarget, look: Look, after: string): string {
  switch (target.kind) {
    case "cloudfront-deployed":
      return `✅ CloudFront ${target.distributionId} is Deployed after ${after}.`;
    case "route53-insync":
      return `✅ Route 53 change ${changeIdOf(target.changeId)}${zoneOf(target)} is INSYNC after ${after}: every Route 53 name server answers with it.`;
    case "dns-nxdomain":
      return `✅ ${nameOf(target)} no longer resolves (NXDOMAIN) after ${after}.`;
    case "http-ok": {
      const status = look.kind === "http-ok" && "status" in look.answer ? look.answer.status : "2xx";
      return `✅ ${hostOf(target.url)} answers ${String(status)} (GET ${target.url}) after ${after}.`;
    }
  }
}

function timedOutText(target: EdgeWaitTarget, look: Look, when: string): string {
  switch (target.kind) {
    case "cloudfront-deployed": {
      const id = target.distributionId;
      return `⌛ CloudFront ${id} is still ${statusOf(target, look)} at the deadline ${when}; check it in the CloudFront console / \`aws cloudfront get-distribution --id ${id} --query Distribution.Status\` (a deployment normally finishes within 15 minutes; one stuck longer is an AWS support case).`;
    }
    case "route53-insync": {
      const id = changeIdOf(target.changeId);
      return `⌛ Route 53 change ${id}${zoneOf(target)} is still ${statusOf(target, look)} at the deadline ${when}; check \`aws route53 get-change --id ${id}\` and the Route 53 Health Dashboard (changes normally sync within 60 s).`;
    }
    case "dns-nxdomain": {
      const name = nameOf(target);
      const lb = loadBalancerName(name);
      const lbCheck =
        lb !== undefined
          ? `, whether the load balancer still exists (\`aws elbv2 describe-load-balancers --names ${lb}\`)`
          : "";
      return `⌛ ${name} ${resolvedText(answerOf(target, look))} at the deadline ${when}; check \`dig ${name}\` against your resolvers${lbCheck} and any record still pointing at it (a cached answer lasts its TTL).`;
    }
    case "http-ok": {
      const url = target.url;
      const hint =
        look.kind === "http-ok" && "status" in look.answer && look.answer.status === 502
          ? " A CloudFront 502 usually means its origin names a load balancer that no longer exists, or a deployment still in progress."
          : "";
      return `⌛ ${hostOf(url)} still ${httpText(target, look)} at the deadline ${when}; check \`curl -sS -o /dev/null -w '%{http_code}' ${url}\` and each hop of the path (Route 53 record → CloudFront origin and its status → load balancer → target health).${hint}`;
    }
  }
}

function statusOf(target: EdgeWaitTarget, look: Look): string {
  return look.kind === target.kind && "status" in look ? look.status : "unknown";
}

function answerOf(target: EdgeWaitTarget, look: Look): ResolveResult {
  return look.kind === target.kind && look.kind === "dns-nxdomain"
    ? look.answer
    : { kind: "error", message: "no answer" };
}

function resolvedText(answer: ResolveResult): string {
  if (answer.kind !== "addresses") return "still exists (no answer)";
  return answer.addresses.length === 0
    ? "still exists (no addresses, NODATA)"
    : `still resolves (${addressesText(answer.addresses)})`;
}

function httpText(target: Extract<EdgeWaitTarget, { kind: "http-ok" }>, look: Look): string {
  const answer = look.kind === "http-ok" ? look.answer : { error: "no answer" };
  return "status" in answer
    ? `answers ${String(answer.status)} (GET ${target.url})`
    : `gives no answer (GET ${target.url}: ${bounded(answer.error, 200)})`;
}

function zoneOf(target: Extract<EdgeWaitTarget, { kind: "route53-insync" }>): string {
  return target.zoneName !== undefined ? ` (zone ${target.zoneName})` : "";
}

function nameOf(target: Extract<EdgeWaitTarget, { kind: "dns-nxdomain" }>): string {
  return target.name.replace(/\.$/, "");
}

function addressesText(addresses: readonly string[]): string {
  const shown = addresses.slice(0, 3).join(", ");
  return addresses.length > 3 ? `${shown}, +${String(addresses.length - 3)} more` : shown;
}

function bounded(message: string, max: number): string {
  return message.length > max ? `${message.slice(0, max - 1)}…` : message;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** `k8s-myapp-worker-01f28dfae5` from `dualstack.k8s-myapp-worker-01f28dfae5-1559597038.<region>.elb.amazonaws.com`. */
function loadBalancerName(dnsName: string): string | undefined {
  const m = /^(?:dualstack\.)?([a-z0-9-]+)-\d+\.[a-z0-9-]+\.elb\.amazonaws\.com\.?$/i.exec(dnsName);
  return m?.[1];
}
