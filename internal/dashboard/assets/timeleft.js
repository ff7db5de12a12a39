// How long each consumer group has before retention deletes a message it
// has not read: the server's own figure (lossRule, lossAt and
// timeToLossSeconds of the queue's consumer groups; docs/retention.md,
// "Time to loss"), computed as the sweep decides, with the partition where
// the loss comes first when that partition is on the page.

// timeLeft answers, for each of groups ([{name, totalLag, lossRule, lossAt,
// timeToLossSeconds}]), {seconds, rule, partition} for its first loss, or
// {none: why} when nothing of it can be lost now.
export function timeLeft(groups, partitions) {
  const out = new Map();
  for (const g of groups || []) {
    if (g.lossAt) {
      out.set(g.name, { seconds: g.timeToLossSeconds, rule: g.lossRule, partition: partitionOf(g, partitions) });
    } else if (g.totalLag > 0 && !g.lossRule) {
      out.set(g.name, { none: 'no rule deletes unread data' });
    } else {
      out.set(g.name, { none: 'nothing unread' });
    }
  }
  return out;
}

// partitionOf finds the partition row where group g's loss comes first.
function partitionOf(g, partitions) {
  for (const p of partitions || []) {
    for (const pg of p.consumerGroups || []) {
      if (pg.consumerGroup === g.name && pg.lossAt === g.lossAt) return p.name;
    }
  }
  return null;
}
