// Charts drawn by the vendored uPlot (loaded before this module as window.uPlot):
// time on the x axis in the browser's zone, spanning the page's timeframe, a legend
// that shows the values under the cursor, a width that follows the page, and a drag
// across any time chart that zooms the page to the range dragged.

const PALETTE = [
  "#2f6fed", "#e4572e", "#17a398", "#f3a712", "#8f3985", "#3d5a80",
  "#6a994e", "#d1495b", "#00798c", "#edae49", "#66a182", "#9e2a2b",
];

export const colour = (i) => PALETTE[i % PALETTE.length];

// A value missing from a group or a bucket reads the same everywhere: in the legend, the
// tables and the axes.
export const MISSING = "—";

// One format for every number the console draws or lists: integers with thousands
// separators, other numbers with at most three decimals (and in exponent form far from 1).
const INTEGER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const DECIMAL = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });
export function formatNumber(v) {
  if (v == null || (typeof v === "number" && Number.isNaN(v))) return MISSING;
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return INTEGER.format(v);
  const size = Math.abs(v);
  if (size !== 0 && (size < 0.001 || size >= 1e15)) return v.toExponential(3);
  return DECIMAL.format(v);
}

function fit(plot, el, height, minWidth = 240) {
  const resize = () => plot.setSize({ width: Math.max(el.clientWidth, minWidth), height });
  new ResizeObserver(resize).observe(el);
  resize();
}

const valueText = (u, v) => formatNumber(v);
// The time axis: at least 90 px between ticks (uPlot's default is 50), as wide as a label
// like "12:05pm" with room to spare; at 50 the labels of an hour's chart ran together.
const timeAxis = () => ({ space: 90 });
const axisNumbers = (u, values) => values.map((v) => formatNumber(v));

// The page again over [fromMs, toMs): the address keeps every other field, so the page
// runs its query again over the range (and a link to it shows the same).
export function zoomTo(fromMs, toMs) {
  const url = new URL(location.href);
  url.searchParams.delete("range");
  url.searchParams.set("from", String(Math.floor(fromMs)));
  url.searchParams.set("to", String(Math.max(Math.ceil(toMs), Math.floor(fromMs) + 1)));
  location.assign(url.toString());
}

// What a drag across the plot selected, in the scales' values; nothing for a click.
function selected(u, withY) {
  const { left, top, width, height } = u.select;
  if (width < 4 && (!withY || height < 4)) return null;
  const x0 = u.posToVal(left, "x");
  const x1 = u.posToVal(left + width, "x");
  if (!withY) return { from: x0 * 1000, to: x1 * 1000 };
  return { from: x0 * 1000, to: x1 * 1000, top: u.posToVal(top, "y"), bottom: u.posToVal(top + height, "y") };
}

function dragHook(onRange, withY = false) {
  return (u) => {
    const range = selected(u, withY);
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    if (range) onRange(range);
  };
}

// x scale over the timeframe ([fromMs, toMs]) when the page gives it, else the data's.
function timeScale(span) {
  if (!span) return { time: true };
  return { time: true, range: () => [span[0] / 1000, span[1] / 1000] };
}

// Cumulative sums per bucket, so bars stack: the first line at the bottom.
function stack(lines) {
  const sums = [];
  return lines.map((line) => {
    const values = line.values.map((v, i) => {
      const below = sums[i] ?? 0;
      sums[i] = below + (v ?? 0);
      return v == null ? null : sums[i];
    });
    return { ...line, values, own: line.values };
  });
}

// lines: [{label, values, colour?}] over `times` (unix ms); options: {height, bars, stacked,
// threshold, yLabel, span: [fromMs, toMs], onZoom(fromMs, toMs) (default: zoomTo; null:
// no zoom), small (a chart in a table's row: no axes, no legend, 120 px wide at least)}.
export function timeChart(el, times, lines, options = {}) {
  const height = options.height ?? 260;
  const small = Boolean(options.small);
  const bars = options.bars || options.stacked;
  const drawn = options.stacked ? stack(lines) : lines;
  const series = [{ label: "Time" }];
  const data = [times.map((t) => t / 1000)];
  // Stacked bars are drawn top first, so each bar's lower part stays visible.
  const order = options.stacked ? [...drawn.keys()].reverse() : [...drawn.keys()];
  for (const i of order) {
    const line = drawn[i];
    const hue = line.colour ?? colour(i); // a line may name its own (#rrggbb)
    series.push({
      label: line.label,
      stroke: hue,
      width: bars ? 1 : 2,
      fill: bars ? hue + (options.stacked ? "cc" : "99") : undefined,
      paths: bars ? uPlot.paths.bars({ size: [0.8, 60] }) : undefined,
      // Points where a line is made of few values (a sparse series is otherwise dashes).
      points: { show: !bars && line.values.filter((v) => v != null).length <= 30 },
      spanGaps: false,
      // The legend shows a stacked bar's own value, not the sum it is drawn at.
      value: line.own ? (u, v, s, idx) => formatNumber(idx == null ? null : line.own[idx]) : valueText,
    });
    data.push(line.values);
  }
  if (options.threshold != null) {
    series.push({ label: "threshold", stroke: "#a4161a", dash: [6, 4], width: 1.5, points: { show: false }, value: valueText });
    data.push(times.map(() => options.threshold));
  }
  const onZoom = options.onZoom === undefined ? zoomTo : options.onZoom;
  const minWidth = small ? 120 : 240;
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, minWidth),
      height,
      series,
      cursor: { focus: { prox: 16 }, drag: { x: Boolean(onZoom), y: false, setScale: false } },
      hooks: onZoom ? { setSelect: [dragHook((r) => onZoom(r.from, r.to))] } : {},
      legend: { show: !small, live: true },
      scales: { x: timeScale(options.span) },
      axes: small
        ? [{ show: false }, { show: false }]
        : [timeAxis(), { label: options.yLabel ?? "", size: 60, values: axisNumbers }],
      padding: small ? [4, 2, 2, 2] : undefined,
    },
    data,
    el,
  );
  el.dataset.zoom = onZoom ? "drag" : "";
  fit(plot, el, height, minWidth);
  return plot;
}

// A scatter of points ({time (unix ms), value, error, href}): a dot per point over the
// timeframe (options.span), red where `error`; a click on a dot opens its href, a drag
// across the chart zooms the page as a time chart's does. options: {height, span, yLabel,
// onZoom}.
export function scatterChart(el, points, options = {}) {
  const height = options.height ?? 220;
  const sorted = [...points].sort((a, b) => a.time - b.time);
  const xs = sorted.map((p) => p.time / 1000);
  const dots = (label, colour, values) => ({
    label,
    stroke: colour,
    fill: colour,
    paths: () => null,
    points: { show: true, space: 0, size: 8, width: 1, stroke: colour, fill: colour + "cc" },
    value: valueText,
    values,
  });
  const series = [
    dots("trace", colour(0), sorted.map((p) => (p.error ? null : p.value))),
    dots("with an error", "#a4161a", sorted.map((p) => (p.error ? p.value : null))),
  ];
  const onZoom = options.onZoom === undefined ? zoomTo : options.onZoom;
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, 240),
      height,
      series: [{ label: "Time" }, ...series.map(({ values, ...s }) => s)],
      cursor: { drag: { x: Boolean(onZoom), y: false, setScale: false }, points: { show: false } },
      hooks: onZoom ? { setSelect: [dragHook((r) => onZoom(r.from, r.to))] } : {},
      legend: { live: false },
      scales: {
        x: timeScale(options.span),
        y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [timeAxis(), { label: options.yLabel ?? "", size: 60, values: axisNumbers }],
    },
    [xs, ...series.map((s) => s.values)],
    el,
  );
  // The dot under the pointer (within 8 px), in the plot's CSS pixels.
  const nearest = (event) => {
    const box = plot.over.getBoundingClientRect();
    const x = event.clientX - box.left;
    const y = event.clientY - box.top;
    let best = null;
    let bestDistance = 8;
    for (const p of sorted) {
      const d = Math.hypot(plot.valToPos(p.time / 1000, "x") - x, plot.valToPos(p.value, "y") - y);
      if (d <= bestDistance && p.href) [best, bestDistance] = [p, d];
    }
    return best;
  };
  let down = null;
  plot.over.addEventListener("mousedown", (e) => { down = [e.clientX, e.clientY]; });
  plot.over.addEventListener("mousemove", (e) => { el.dataset.hover = nearest(e) ? "point" : ""; });
  plot.over.addEventListener("click", (e) => {
    if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) > 4) return; // a drag
    const point = nearest(e);
    if (point) location.assign(point.href);
  });
  el.dataset.zoom = onZoom ? "drag" : "";
  fit(plot, el, height);
  return plot;
}

// A bucket's sign: that of its edge away from 0 (the smallest numbers' bucket may start at
// 0, its edge underflowing); 0 for the bucket of 0 alone.
const signOf = ([lo, hi]) => Math.sign(Math.abs(lo) > Math.abs(hi) ? lo : hi);
// The series' ratio: a bucket's max over its min, from a bucket with both (not 0 nor past
// the largest double), that moves away from 0 for positive buckets and toward it for
// negative ones.
const ratioOf = (sign, a, b) =>
  [a, b].map(([lo, hi]) => hi / lo).find((r) => Number.isFinite(r) && (sign > 0 ? r > 1 : r > 0 && r < 1));

// The rows of a heatmap: its value buckets from the smallest up, those between two that
// hold events put back where the answer leaves them out. Of one sign the edges are a
// geometric series (each bucket's max over its min is the same ratio), so an empty bucket
// is the one before's max times that ratio; across 0 the rows stay as they come (the
// buckets between the smallest numbers of each sign are no axis anyone reads). Without
// them, requests under 200 ms and from 1.5 to 3 s were drawn as neighbouring rows, and the
// gap between the two, the very thing a heatmap shows, was gone.
export function heatmapRows(held) {
  const rows = [];
  for (const row of held) {
    const last = rows[rows.length - 1];
    const sign = last ? signOf(last) : 0;
    const ratio = sign !== 0 && sign === signOf(row) ? ratioOf(sign, last, row) : undefined;
    if (ratio) {
      let edge = last[1];
      // A bound on what is put back: the answer holds at most 40 buckets of each sign.
      for (let n = 0; n < 80 && edge * ratio <= row[0] + Math.abs(row[0]) * 1e-9; n++) {
        rows.push([edge, edge * ratio]);
        edge *= ratio;
      }
    }
    rows.push(row);
  }
  return rows;
}

// A heatmap: per time bucket, counts over value buckets ({min, max, count}, the same edges
// at every time). Rows are the value buckets from the smallest held to the largest
// (heatmapRows), evenly spaced: the edges are log-spaced, so this is a log axis that also
// holds 0 and negatives.
// options: {height, span, yLabel, step (bucket width, ms), onSelect({from, to, min, max})}.
export function heatmapChart(el, series, options = {}) {
  const height = options.height ?? 300;
  const edges = new Map();
  for (const point of series) for (const b of point.buckets ?? []) edges.set(`${b.min}|${b.max}`, [b.min, b.max]);
  const rows = heatmapRows([...edges.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
  const rowOf = new Map(rows.map(([lo, hi], i) => [`${lo}|${hi}`, i]));
  const times = series.map((p) => p.time / 1000);
  const step = (options.step ?? (series.length > 1 ? series[1].time - series[0].time : 60_000)) / 1000;
  let most = 1;
  for (const point of series) for (const b of point.buckets ?? []) most = Math.max(most, b.count);
  const counts = series.map((p) => (p.buckets ?? []).reduce((n, b) => n + b.count, 0));
  const edgeText = (i) => {
    const row = rows[Math.min(Math.max(Math.floor(i), 0), rows.length - 1)];
    // Edges are powers of 2^(1/8): three significant digits label them well enough.
    return row ? formatNumber(Number(row[0].toPrecision(3))) : "";
  };
  const draw = (u) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    series.forEach((point, t) => {
      const x0 = u.valToPos(times[t], "x", true);
      const x1 = u.valToPos(times[t] + step, "x", true);
      for (const b of point.buckets ?? []) {
        const row = rowOf.get(`${b.min}|${b.max}`);
        const y0 = u.valToPos(row, "y", true);
        const y1 = u.valToPos(row + 1, "y", true);
        // Darker for more events, on a log scale: a few slow requests stay visible.
        const share = Math.log1p(b.count) / Math.log1p(most);
        ctx.fillStyle = `rgba(47, 111, 237, ${(0.12 + 0.88 * share).toFixed(3)})`;
        ctx.fillRect(x0, y1, Math.max(x1 - x0 - 1, 1), Math.max(y0 - y1 - 1, 1));
      }
    });
    ctx.restore();
  };
  const onSelect = options.onSelect;
  const region = (r) => {
    const lowRow = Math.max(0, Math.floor(Math.min(r.top, r.bottom)));
    const highRow = Math.min(rows.length - 1, Math.floor(Math.max(r.top, r.bottom)));
    if (!rows.length || lowRow > highRow) return;
    onSelect({ from: r.from, to: r.to, min: rows[lowRow][0], max: rows[highRow][1] });
  };
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, 240),
      height,
      series: [{ label: "Time" }, { label: "events", stroke: "transparent", points: { show: false }, value: valueText }],
      cursor: { drag: { x: Boolean(onSelect), y: Boolean(onSelect), setScale: false }, points: { show: false } },
      hooks: { draw: [draw], ...(onSelect ? { setSelect: [dragHook(region, true)] } : {}) },
      legend: { live: true },
      scales: {
        x: options.span ? timeScale(options.span) : { time: true, range: () => [times[0], times[times.length - 1] + step] },
        y: { auto: false, range: [0, Math.max(rows.length, 1)] },
      },
      axes: [
        timeAxis(),
        {
          label: options.yLabel ?? "",
          size: 70,
          splits: () => rows.map((_, i) => i).filter((i) => rows.length <= 12 || i % Math.ceil(rows.length / 12) === 0),
          values: (u, splits) => splits.map(edgeText),
        },
      ],
    },
    [times, counts],
    el,
  );
  el.dataset.heatmapRows = String(rows.length);
  fit(plot, el, height);
  return plot;
}

export function readData(id) {
  const block = document.getElementById(id);
  return block ? JSON.parse(block.textContent) : null;
}
