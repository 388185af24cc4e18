// The hand-written AIMD counter the concurrency benchmark measures against: a count of calls in
// flight under a limit that grows by one and shrinks by a tenth, handing back a token that
// remembers its start and the count it found. No priorities, no settle-once, no bad-input
// handling: the least the same job needs.

export class PlainToken {
  constructor(
    readonly owner: PlainAimd,
    readonly start: number,
    readonly inflight: number,
  ) {}
  pass(now: number): void {
    this.owner.land(this, now);
  }
}

export class PlainAimd {
  inflight = 0;
  limit = 20;
  acquire(now: number): PlainToken | undefined {
    if (this.inflight >= this.limit) return undefined;
    return new PlainToken(this, now, ++this.inflight);
  }
  land(token: PlainToken, now: number): void {
    this.inflight--;
    if (now - token.start > 5_000) this.limit = Math.max(20, Math.floor(this.limit * 0.9));
    else if (token.inflight * 2 >= this.limit) this.limit = Math.min(200, this.limit + 1);
  }
}
