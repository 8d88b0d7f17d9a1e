/**
 * Identifiers that look like the real ones (`sg-0` + 16 hex, `eni-0` + 16 hex, ELB ARN suffixes,
 * Route 53 `Z…`/`C…` ids, CloudFront `E…` ids and ETags). A seeded generator keeps a scenario's
 * ids stable from run to run, which makes failures reproducible.
 */
export class IdGenerator {
  private state: number;

  public constructor(seed = 0x2f6e2b1) {
    this.state = seed >>> 0;
  }

  /** mulberry32: tiny, fast, good enough for ids. */
  private next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  public chars(alphabet: string, n: number): string {
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(this.next() * alphabet.length)] ?? "";
    return out;
  }

  public hex(n: number): string {
    return this.chars("0123456789abcdef", n);
  }

  public digits(n: number): string {
    return this.chars("123456789", 1) + this.chars("0123456789", n - 1);
  }

  public upper(n: number): string {
    return this.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", n);
  }

  public uuid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  public requestId(): string {
    return this.uuid();
  }

  public securityGroupId(): string {
    return `sg-0${this.hex(16)}`;
  }

  public ruleId(): string {
    return `sgr-0${this.hex(16)}`;
  }

  public eniId(): string {
    return `eni-0${this.hex(16)}`;
  }

  public attachmentId(): string {
    return `ela-attach-0${this.hex(16)}`;
  }

  public hostedZoneId(): string {
    return `Z0${this.upper(19)}`;
  }

  public changeId(): string {
    return `C0${this.upper(19)}`;
  }

  public distributionId(): string {
    return `E${this.upper(13)}`;
  }

  public etag(): string {
    return `E${this.upper(13)}`;
  }
}
