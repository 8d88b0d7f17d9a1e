/**
 * The overall deadline of one diagnosis. The collectors read through ports wrapped here: once the
 * deadline passes, every call still waiting (and every call started afterwards) fails at once with a
 * coded error naming what did not answer, so the collectors' own "could not read" paths turn the
 * missing parts into warnings and the diagnosis returns what it has, marked partial.
 */
import type { DiagnosisAwsReads } from "../aws/port.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { ResourceType } from "../kube/types.js";

/** Default bound on one diagnosis: Slack users expect an answer well within half a minute. */
export const DEFAULT_DIAGNOSIS_DEADLINE_MS = 20_000;

export interface DiagnosisDeadline {
  /** The same port; its calls fail once the deadline has passed. */
  kube(port: KubePort): KubePort;
  aws(port: DiagnosisAwsReads): DiagnosisAwsReads;
  /** What was cut off by the deadline, in the order it was cut off (deduplicated). */
  missed(): readonly string[];
  /** The warning that marks the result partial, or undefined when nothing was cut off. */
  summary(): string | undefined;
  /** Clears the timer (the diagnosis finished). */
  dispose(): void;
}

export function startDiagnosisDeadline(ms: number): DiagnosisDeadline {
  const seconds = `${Number((ms / 1000).toFixed(1))} s`;
  const missed: string[] = [];
  let expired = false;
  let fire: () => void = () => undefined;
  const expiry = new Promise<void>((resolve) => {
    fire = resolve;
  });
  const timer = setTimeout(() => {
    expired = true;
    fire();
  }, ms);
  // A pending diagnosis must not keep a CLI process alive on its own.
  timer.unref();

  const cutOff = (what: string): UnstuckError => {
    if (!missed.includes(what)) missed.push(what);
    return new UnstuckError(
      ErrorCode.Upstream,
      `No answer before the diagnosis deadline (${seconds}): ${what}.`,
      { timedOut: true, timeoutMs: ms, deadline: true },
    );
  };

  // Every call races the one shared expiry rather than a timer of its own (`withTimeout` of
  // src/util/deadline.ts): a call started late gets only what is left of the diagnosis, the calls
  // still waiting are cut off together, and the single unref'd timer is all there is to clear.
  const bounded = <T>(what: string, call: () => Promise<T>): Promise<T> => {
    if (expired) return Promise.reject(cutOff(what));
    // The expiry reaches every call made so far: only one still waiting is cut off and named.
    let waiting = true;
    const answer = call();
    const settle = (): void => {
      waiting = false;
    };
    answer.then(settle, settle);
    return Promise.race([
      answer,
      expiry.then((): Promise<T> => (waiting ? Promise.reject(cutOff(what)) : answer)),
    ]);
  };

  function wrap<P extends object>(
    port: P,
    describe: (method: string, args: readonly unknown[]) => string,
  ): P {
    return new Proxy(port, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        const fn = value as (...args: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) => bounded(describe(prop, args), () => fn.apply(target, args));
      },
    });
  }

  return {
    kube: (port) => wrap(port, describeKubeCall),
    aws: (port) => wrap(port, (method) => `AWS ${method}`),
    missed: () => missed,
    summary: () =>
      missed.length === 0
        ? undefined
        : `Partial result: the diagnosis deadline (${seconds}) passed before these answered: ${missed.join("; ")}.`,
    dispose: () => clearTimeout(timer),
  };
}

/** A Kubernetes call as an operator would name it (`list ingresses.networking.k8s.io in myapp`). */
function describeKubeCall(method: string, args: readonly unknown[]): string {
  const type = (v: unknown): string => {
    const t = v as ResourceType | undefined;
    return t?.resource !== undefined ? (t.group ? `${t.resource}.${t.group}` : t.resource) : "objects";
  };
  const inNs = (v: unknown): string => (typeof v === "string" ? ` in ${v}` : " in all namespaces");
  switch (method) {
    case "getNamespace":
      return `get namespace ${String(args[0])}`;
    case "discover":
      return "API discovery";
    case "listObjects":
      return `list ${type(args[0])}${inNs(args[1])}`;
    case "getObject":
      return `get ${type(args[0])} ${String(args[1])}/${String(args[2])}`;
    case "listDeployments":
      return "list deployments.apps";
    case "listPods":
      return `list pods${inNs(args[0])}`;
    case "podLog":
      return `logs of pod ${String(args[0])}/${String(args[1])}`;
    case "listEvents":
      return `list events${inNs(args[0])}`;
    case "listApiServices":
      return "list apiservices.apiregistration.k8s.io";
    case "getServiceEndpoints":
      return `endpoints of Service ${String(args[0])}/${String(args[1])}`;
    default:
      return `Kubernetes ${method}`;
  }
}
