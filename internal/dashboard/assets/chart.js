// A stacked bar chart over time, drawn as SVG: one bar per bucket, one
// stacked segment per rule.
import { h, num, time } from './ui.js';

const W = 900;
const H = 240;
const PAD = { left: 52, right: 12, top: 12, bottom: 28 };

// niceMax rounds up to 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// stackedBars draws buckets ({at: Date, values: {key: n}}) between from
// and to; each bucket spans bucketMs. series are {key, label}.
export function stackedBars({ from, to, bucketMs, buckets, series, name }) {
  const x0 = from.getTime();
  const span = Math.max(1, to.getTime() - x0);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const totals = buckets.map((b) => series.reduce((s, k) => s + (b.values[k.key] || 0), 0));
  const yMax = niceMax(Math.max(0, ...totals));
  const x = (t) => PAD.left + ((t - x0) / span) * plotW;
  const y = (v) => PAD.top + plotH - (v / yMax) * plotH;
  const barW = Math.max(2, (bucketMs / span) * plotW - 1);

  const grid = [0, 0.5, 1].map((f) => {
    const v = yMax * f;
    return h('g', null,
      h('line', { class: 'grid', x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v) }),
      h('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, num(v)));
  });
  const ticks = [0, 0.5, 1].map((f) => h('text', {
    x: PAD.left + f * plotW, y: H - 8, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle',
  }, time(new Date(x0 + f * span).toISOString())));
  const bars = buckets.map((b) => {
    let base = 0;
    const bx = Math.min(W - PAD.right - barW, Math.max(PAD.left, x(b.at.getTime())));
    return h('g', { 'data-bucket': b.at.toISOString() }, series.map((s) => {
      const v = b.values[s.key] || 0;
      if (!v) return null;
      const rect = h('rect', {
        class: 'bar ' + s.key, x: bx.toFixed(1), width: barW.toFixed(1),
        y: y(base + v).toFixed(1), height: Math.max(1, y(base) - y(base + v)).toFixed(1),
        'data-rule': s.key, 'data-value': v,
      }, h('title', null, `${time(b.at.toISOString())}: ${num(v)} messages by ${s.label}`));
      base += v;
      return rect;
    }));
  });
  const axis = h('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0) });
  const svg = h('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': name, 'data-chart': name },
    grid, axis, bars, ticks);
  const legend = h('div', { class: 'legend' },
    series.map((s) => h('span', null, h('span', { class: 'swatch ' + s.key }), s.label)));
  return h('div', { class: 'chart' }, legend, svg);
}
