// The Services pages: requests and errors over the timeframe, per service or operation
// (a small chart in each row) and for the service a page is about; a drag across any of
// them zooms the page to the range.
import { readData, timeChart } from "./charts.js";

const data = readData("service-series");
if (data) {
  const lines = (row) => [
    { label: "requests", values: row.requests },
    { label: "errors", values: row.errors },
  ];
  for (const el of document.querySelectorAll("[data-series]")) {
    const row = data.rows[Number(el.dataset.series)];
    if (!row) continue;
    const small = el.dataset.chart === "small";
    timeChart(el, data.times, lines(row), small ? { small: true, height: 40, bars: true, span: data.span } : { bars: true, height: 160, span: data.span });
  }
}
