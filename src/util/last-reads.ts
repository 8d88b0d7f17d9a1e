/**
 * The reads the last run of something made, by key (a namespace), so that the next run can ask them
 * again at once instead of one round after another. Bounded: the most recently remembered keys, and
 * the first reads of each.
 */
export class LastReads<R> {
  private readonly byKey = new Map<string, readonly R[]>();

  /**
   * @param keep which reads are worth asking again (a read whose arguments change with every run
   *   never is)
   */
  public constructor(
    private readonly keep: (read: R) => boolean,
    private readonly maxKeys = 100,
    private readonly maxReads = 60,
  ) {}

  public of(key: string): readonly R[] {
    return this.byKey.get(key) ?? [];
  }

  /** These replace what `key` had; asked about again, it is the most recent. Nothing kept forgets it. */
  public remember(key: string, reads: readonly R[]): void {
    this.byKey.delete(key);
    const kept = reads.filter(this.keep).slice(0, this.maxReads);
    if (kept.length === 0) return;
    this.byKey.set(key, kept);
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.maxKeys) break;
      this.byKey.delete(oldest);
    }
  }
}
