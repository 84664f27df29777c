import { MemberList } from './member-list';

describe('MemberList', () => {
  it('keeps its members in the order they joined, whichever leaves', () => {
    const list = new MemberList<string>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((value) => list.add(value));
    b!.leave();
    expect(list.values()).toEqual(['a', 'c', 'd']);
    a!.leave();
    d!.leave();
    expect(list.values()).toEqual(['c']);
    expect(list.size).toBe(1);
    list.add('e');
    expect(list.values()).toEqual(['c', 'e']);
    c!.leave();
    expect(list.values()).toEqual(['e']);
  });

  it('counts a member that leaves twice once', () => {
    const list = new MemberList<number>();
    const one = list.add(1);
    list.add(2);
    one.leave();
    one.leave();
    expect(list.size).toBe(1);
    expect(list.values()).toEqual([2]);
  });

  it('lets members leave while the list is walked', () => {
    const list = new MemberList<number>();
    const memberships = [1, 2, 3].map((value) => list.add(value));
    const seen: number[] = [];
    for (const value of list.values()) {
      seen.push(value);
      for (const membership of memberships) membership.leave();
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(list.size).toBe(0);
    expect(list.values()).toEqual([]);
  });

  it('keeps nothing of a member that left, nor does the member keep its neighbours', () => {
    const list = new MemberList<object>();
    const first = list.add({});
    const middle = list.add({});
    const last = list.add({});
    middle.leave();
    expect([middle.prev, middle.next]).toEqual([undefined, undefined]);
    expect(first.next).toBe(last);
    expect(last.prev).toBe(first);
    first.leave();
    last.leave();
    expect([list.head, list.tail]).toEqual([undefined, undefined]);
  });
});
