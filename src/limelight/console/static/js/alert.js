// An alert's history: each check's value (one line per group) against the threshold,
// which spans the whole chart (a margin on each side, so one check is seen too).
import { readData, timeChart } from "./charts.js";

const chart = readData("alert-data");
const el = document.getElementById("alert-chart");
if (chart && el && chart.times.length) {
  const first = chart.times[0];
  const last = chart.times[chart.times.length - 1];
  const margin = Math.max((last - first) * 0.05, 5 * 60_000);
  const times = [first - margin, ...chart.times, last + margin];
  const lines = chart.series.map((s) => ({ label: s.label, values: [null, ...s.values, null] }));
  // The checks are not a timeframe of the address: no zoom here.
  timeChart(el, times, lines, { threshold: chart.threshold, yLabel: chart.calculation, onZoom: null });
}
