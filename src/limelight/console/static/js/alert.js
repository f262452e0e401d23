// An alert's history: each check's value (one line per group) against the threshold.
import { readData, timeChart } from "./charts.js";

const chart = readData("alert-data");
const el = document.getElementById("alert-chart");
if (chart && el && chart.times.length) {
  timeChart(el, chart.times, chart.series, { threshold: chart.threshold, yLabel: chart.calculation });
}
