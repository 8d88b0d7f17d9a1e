/**
 * Every Redis key the bot reads or writes, built here and nowhere else. `p` is the install's prefix
 * (`UNSTUCK_REDIS_PREFIX`; on a Redis Cluster it carries a hash tag, so every key below shares one
 * slot and a script may take any of them together). A key carries ids (a request id, a cluster, a
 * namespace, a Slack message), never content and never authority: what a key holds that matters
 * is signed by a key of this install and checked when read.
 *
 * The Lua scripts of `./lua/` take their keys from these builders; where a script derives a key
 * itself (the approval store's expiry and vote keys), it is given the prefix built here.
 */

/** Under `p`: one builder per kind of key, grouped by the module that owns it. */
export const RedisKeys = {
  /** BullMQ's prefix: every queue, job, lock and scheduler of this install. */
  bull: (p: string): string => `${p}:bull`,
  /** The audit stream (XADD). */
  audit: (p: string): string => `${p}:audit`,
  /** The approval store's prefix (see `ApprovalKeys`). */
  approvals: (p: string): string => `${p}:approvals`,
  /** The namespace watcher's prefix (see `WatcherKeys`). */
  watcher: (p: string): string => `${p}:watcher`,
  /** A fleet cluster's own prefix: its workers' keys live under it (see `FleetKeys`). */
  fleet: (p: string, cluster: string): string => `${p}:fleet:${cluster}`,
  /** The post ledger's record of one step (`jobs/post-once.ts`). */
  posted: (p: string, step: string): string => `${p}:posted:${step}`,
  /** The newest look of one shared edge check (`jobs/edge-waits.ts`), and the claim on its next one. */
  edgeLook: (p: string, check: string): string => `${p}:edge-look:${check}`,
  edgeLookClaim: (p: string, check: string): string => `${RedisKeys.edgeLook(p, check)}:claim`,
  /** The last status edit of one Slack message, and the lease held while it is edited. */
  statusEdit: (p: string, channel: string, ts: string): string => `${p}:status-edit:{${channel}:${ts}}`,
  statusEditLease: (p: string, channel: string, ts: string): string =>
    `${RedisKeys.statusEdit(p, channel, ts)}:lease`,
  /** The messages posted about one namespace of one cluster (`jobs/namespace-messages.ts`). */
  namespaceMessages: (p: string, cluster: string, namespace: string): string =>
    `${p}:ns-messages:${cluster}:${namespace}`,
  /** A repair card (by its Slack message) and the card of a request (`jobs/repair-cards.ts`). */
  repairCard: (p: string, channel: string, ts: string): string => `${p}:repair-card:${channel}:${ts}`,
  repairCardOf: (p: string, requestId: string): string => `${p}:repair-card-of:${requestId}`,
  /** One API server's fleet-wide budget of Kubernetes requests, and who waits for it. */
  kubeBudget: (p: string, server: string): string => `${p}:kube-budget:${server}`,
  kubeBudgetWaiting: (p: string, server: string): string => `${RedisKeys.kubeBudget(p, server)}:waiting`,
  /** One Slack event's claim, so one replica handles each delivery (ids are bounded to 128 chars). */
  slackEvent: (p: string, eventId: string): string => `${p}:slack-event:${eventId.slice(0, 128)}`,
} as const;

/** Under the approval store's prefix (`RedisKeys.approvals(p)`). */
export const ApprovalKeys = {
  /** A request (hash), its voters (set) and its votes (hash). */
  request: (ap: string, id: string): string => `${ap}:req:${id}`,
  voters: (ap: string, id: string): string => `${ApprovalKeys.request(ap, id)}:voters`,
  votes: (ap: string, id: string): string => `${ApprovalKeys.request(ap, id)}:votes`,
  /** The prefix of every request key (the expiry script derives a request's keys from it). */
  requestPrefix: (ap: string): string => `${ap}:req:`,
  /** How a request ended, kept outside its hash so a rolled-back record is refused. */
  finished: (ap: string, id: string): string => `${ap}:finished:${id}`,
  finishedPrefix: (ap: string): string => `${ap}:finished:`,
  /** How often the sweep re-enqueued an approved request. */
  requeues: (ap: string, id: string): string => `${ap}:requeues:${id}`,
  /** One cluster's outbox of follow-ups (request id -> ms recorded); `""` is the single cluster. */
  followUps: (ap: string, cluster: string): string =>
    `${ap}:follow-ups:${cluster === "" ? "local" : cluster}`,
  /** The open request of one subject (one request per object at a time). */
  open: (ap: string, subjectKey: string): string => `${ap}:open:${subjectKey}`,
  /** Requests waiting for votes, and approved ones not claimed yet (sorted sets). */
  pending: (ap: string): string => `${ap}:pending`,
  approved: (ap: string): string => `${ap}:approved`,
  /** The stream a store without an audit log passes its scripts: never written. */
  noAudit: (ap: string): string => `${ap}:no-audit`,
  /** Every key of the store (a SCAN pattern). */
  all: (ap: string): string => `${ap}:*`,
} as const;

/** Under the watcher's prefix (`RedisKeys.watcher(p)`). */
export const WatcherKeys = {
  /** The lease of the one replica that watches. */
  leader: (wp: string): string => `${wp}:leader`,
  /** The resourceVersion the watch resumes from. */
  resourceVersion: (wp: string): string => `${wp}:rv`,
  /** Namespaces seen Terminating (name -> since), and the open episodes (uid -> their message). */
  terminating: (wp: string): string => `${wp}:terminating`,
  open: (wp: string): string => `${wp}:open`,
  /** One Terminating episode of a namespace (its uid and deletion time): posted once. */
  episode: (wp: string, uid: string, deletionTimestamp: string): string =>
    `${wp}:episode:${uid}:${deletionTimestamp}`,
} as const;

/** Under the bot's prefix, per fleet cluster. */
export const FleetKeys = {
  /** The workers of a cluster that beat (sorted set: worker -> alive until). */
  alive: (p: string, cluster: string): string => `${RedisKeys.fleet(p, cluster)}:alive`,
  /** When a worker of the cluster was last seen. */
  seen: (p: string, cluster: string): string => `${RedisKeys.fleet(p, cluster)}:seen`,
  /** A hub→worker call's nonce, claimed once for as long as the call could still run. */
  callNonce: (p: string, cluster: string, nonce: string): string =>
    `${RedisKeys.fleet(p, cluster)}:call:${nonce}`,
} as const;
