/**
 * A long-lived collection of short-lived members - one per request in
 * flight - that each leave through the {@link Membership} their `add`
 * returned: both in constant time, in insertion order, with nothing kept of
 * a member once it left.
 *
 * Why not a `Set` or a `Map`: one that thousands of members join and leave
 * each second keeps rebuilding its table (a deleted entry is only dropped by
 * a rebuild). V8 leaves each table it dropped in the old generation, where
 * only a full collection frees it, with the entries it held when it was
 * dropped; until then every young-generation collection counts those as
 * live, and copies and promotes them, with the whole request each of them
 * reaches. A first execution over HTTP promoted about 5 KB per request that
 * way through three such collections, and spent a tenth of its CPU in
 * garbage collection; a member that leaves this list is unlinked, and its
 * request is freed young.
 */
export class MemberList<T> {
  /** @internal The first member, the oldest. */
  head: Membership<T> | undefined;
  /** @internal The last member, the newest. */
  tail: Membership<T> | undefined;
  private count = 0;

  /** Members now. */
  get size(): number {
    return this.count;
  }

  /** Add `value` as the newest member; it leaves through the returned membership. */
  add(value: T): Membership<T> {
    const membership = new Membership(this, value, this.tail);
    if (this.tail) this.tail.next = membership;
    else this.head = membership;
    this.tail = membership;
    this.count += 1;
    return membership;
  }

  /** The members now, oldest first: a copy, so a member may leave while it is walked. */
  values(): T[] {
    const values: T[] = [];
    for (let member = this.head; member; member = member.next) values.push(member.value);
    return values;
  }

  /** @internal Unlink `membership` (see `Membership.leave`). */
  unlink(membership: Membership<T>): void {
    const { prev, next } = membership;
    if (prev) prev.next = next;
    else this.head = next;
    if (next) next.prev = prev;
    else this.tail = prev;
    this.count -= 1;
  }
}

/** One member's place in a {@link MemberList}. */
export class Membership<T> {
  /** @internal */
  next: Membership<T> | undefined;
  private list: MemberList<T> | undefined;

  constructor(
    list: MemberList<T>,
    readonly value: T,
    /** @internal */
    public prev: Membership<T> | undefined,
  ) {
    this.list = list;
  }

  /** Leave the list; once is enough, a second call does nothing. */
  leave(): void {
    if (!this.list) return;
    this.list.unlink(this);
    // Nothing of the list is reachable from here any more, nor this from it.
    this.list = this.prev = this.next = undefined;
  }
}
