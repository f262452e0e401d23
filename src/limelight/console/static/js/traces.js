// The Traces page: a dot per trace listed (duration over start time), a click opening
// its trace, a drag zooming the page to the range.
import { readData, scatterChart } from "./charts.js";

const chart = readData("trace-points");
const chartEl = document.getElementById("trace-scatter");
if (chart && chartEl) {
  scatterChart(chartEl, chart.points, { span: chart.span, yLabel: "duration (ms)" });
}
