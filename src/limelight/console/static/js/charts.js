// Charts drawn by the vendored uPlot (loaded before this module as window.uPlot):
// time on the x axis in the browser's zone, a legend that shows the values under the
// cursor, and a width that follows the page.

const PALETTE = [
  "#2f6fed", "#e4572e", "#17a398", "#f3a712", "#8f3985", "#3d5a80",
  "#6a994e", "#d1495b", "#00798c", "#edae49", "#66a182", "#9e2a2b",
];

export const colour = (i) => PALETTE[i % PALETTE.length];

function fit(plot, el, height) {
  const resize = () => plot.setSize({ width: Math.max(el.clientWidth, 240), height });
  new ResizeObserver(resize).observe(el);
  resize();
}

const valueText = (u, v) => (v == null ? "—" : Number.isInteger(v) ? String(v) : v.toFixed(3));

// lines: [{label, values}] over `times` (unix ms); options: {height, bars, threshold, yLabel}
export function timeChart(el, times, lines, options = {}) {
  const height = options.height ?? 260;
  const series = [{ label: "Time" }];
  const data = [times.map((t) => t / 1000)];
  lines.forEach((line, i) => {
    series.push({
      label: line.label,
      stroke: colour(i),
      width: 2,
      fill: options.bars ? colour(i) + "99" : undefined,
      paths: options.bars ? uPlot.paths.bars({ size: [0.8, 60] }) : undefined,
      // Points where a line is made of few values (a sparse series is otherwise dashes).
      points: { show: line.values.filter((v) => v != null).length <= 30 },
      spanGaps: false,
      value: valueText,
    });
    data.push(line.values);
  });
  if (options.threshold != null) {
    series.push({ label: "threshold", stroke: "#a4161a", dash: [6, 4], width: 1.5, points: { show: false }, value: valueText });
    data.push(times.map(() => options.threshold));
  }
  const plot = new uPlot(
    {
      width: Math.max(el.clientWidth, 240),
      height,
      series,
      cursor: { focus: { prox: 16 } },
      legend: { live: true },
      scales: { x: { time: true } },
      axes: [{}, { label: options.yLabel ?? "", size: 60 }],
    },
    data,
    el,
  );
  fit(plot, el, height);
  return plot;
}

export function readData(id) {
  const block = document.getElementById(id);
  return block ? JSON.parse(block.textContent) : null;
}
