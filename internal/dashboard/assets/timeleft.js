// How long each consumer group has before retention could delete a message
// it has not read, under the queue's current rules. Only two rules delete
// unread data: retentionSeconds (with retentionEnabled) and
// maxWaitTimeSeconds; completedRetentionSeconds never does, and tiers move
// unread data to the held area instead of deleting it.
//
// A rule deletes a segment once its newest message is older than
// now - window, so the group's oldest unread message can go at the
// earliest at (its time + window). That is a lower bound: the segment
// holding it may hold newer messages that keep it longer, and the deletion
// happens at the first retention cycle after that time.

// unreadRules lists the rules that can delete unread data, with windows.
export function unreadRules(rules) {
  const out = [];
  if (rules.retentionEnabled && rules.retentionSeconds > 0) out.push({ rule: 'retention', seconds: rules.retentionSeconds });
  if (rules.maxWaitTimeSeconds > 0) out.push({ rule: 'max_wait', seconds: rules.maxWaitTimeSeconds });
  return out;
}

// timeLeft answers, for each group found on partitions
// ([{name, consumerGroups: [{consumerGroup, oldestUnconsumedAt}]}]),
// {seconds, rule, partition, at} for its earliest possible loss, or
// {none: why} when nothing of it can be lost now. now is the server's time.
export function timeLeft(rules, partitions, now) {
  const active = unreadRules(rules);
  const out = new Map();
  for (const p of partitions) {
    for (const g of p.consumerGroups || []) {
      const name = g.consumerGroup;
      if (!out.has(name)) out.set(name, { none: 'nothing unread' });
      if (!g.oldestUnconsumedAt) continue;
      if (!active.length) {
        out.set(name, { none: 'no rule deletes unread data' });
        continue;
      }
      const oldest = Date.parse(g.oldestUnconsumedAt);
      for (const r of active) {
        const at = oldest + r.seconds * 1000;
        const cur = out.get(name);
        if (cur.at === undefined || at < cur.at) {
          out.set(name, { at, seconds: (at - now.getTime()) / 1000, rule: r.rule, partition: p.name });
        }
      }
    }
  }
  return out;
}
