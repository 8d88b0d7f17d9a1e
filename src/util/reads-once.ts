/**
 * Each distinct read made once: a read is its name and its arguments (as JSON), and every later ask
 * of the same read shares its answer, or its failure. What a diagnosis asks ahead of need is then
 * what its later asks get. Kept as long as the returned function is (one diagnosis).
 */
export type ReadOnce = <A extends unknown[], R>(
  name: string,
  read: (...args: A) => Promise<R>,
) => (...args: A) => Promise<R>;

export function readsOnce(): ReadOnce {
  const made = new Map<string, Promise<unknown>>();
  return <A extends unknown[], R>(name: string, read: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      const key = `${name} ${JSON.stringify(args)}`;
      let answer = made.get(key) as Promise<R> | undefined;
      if (answer === undefined) {
        answer = read(...args);
        // Its callers see a failure; a read ahead that nobody waits for is not left unhandled.
        answer.catch(() => undefined);
        made.set(key, answer);
      }
      return answer;
    };
}
