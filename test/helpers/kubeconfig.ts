/** A kubeconfig whose API server is `server` (e.g. a port nothing listens on: an API server that is down). */
export function kubeconfigFor(server: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    `clusters: [{name: c, cluster: {server: "${server}"}}]`,
    "users: [{name: u, user: {token: t}}]",
    "contexts: [{name: x, context: {cluster: c, user: u}}]",
    "current-context: x",
    "",
  ].join("\n");
}
