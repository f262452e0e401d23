// A board: each panel's run (done by the server, over the board's timeframe) drawn as
// the panel says: lines, stacked bars, a heatmap, one number or a table. Every chart
// spans the board's timeframe, and a drag across any of them zooms the whole board
// (charts.js's zoomTo: from/to in the address, every panel runs again).
import { localTime } from "./console.js";
import { MISSING, formatNumber, heatmapChart, readData, timeChart, zoomTo } from "./charts.js";

const state = readData("board-state");
// Values that are 0 over no events; the others have no value there.
const ZERO_WHEN_EMPTY = /^(COUNT|COUNT_DISTINCT|SUM)(\(|$)/;

const groupValue = (v) => (v == null ? MISSING : String(v));
const groupLabel = (groups) => {
  const values = Object.entries(groups ?? {});
  if (!values.length) return "all events";
  return values.map(([k, v]) => (values.length === 1 ? groupValue(v) : `${k}=${groupValue(v)}`)).join(" · ");
};

// The values a calculation run holds, by name, in the query's order (the panel's
// `values`: the page's JSON has its keys sorted, so a row's own order is not the query's).
const valueNames = (data, panel) => (data.aggregates?.length ? panel.values : []);

function note(card, text) {
  const el = card.querySelector("[data-panel-note]");
  el.textContent = text;
  el.hidden = false;
}

function lines(data, name) {
  const zero = ZERO_WHEN_EMPTY.test(name);
  const byLabel = new Map(data.aggregates.map((a) => [groupLabel(a.groups), data.series.map(() => (zero ? 0 : null))]));
  data.series.forEach((bucket, i) => {
    for (const row of bucket.data) {
      const label = groupLabel(row.groups);
      if (!byLabel.has(label)) byLabel.set(label, data.series.map(() => (zero ? 0 : null)));
      byLabel.get(label)[i] = row.aggregates[name] ?? null;
    }
  });
  return [...byLabel].map(([label, values]) => ({ label, values }));
}

function drawChart(card, panel, data) {
  const el = card.querySelector("[data-panel-chart]");
  el.hidden = false;
  const heatmap = panel.visualization === "heatmap" && panel.heatmap && data.series.some((p) => p.buckets);
  if (heatmap) {
    el.dataset.chart = "heatmap";
    heatmapChart(el, data.series, { span: state.span, height: 220, onSelect: (r) => zoomTo(r.from, r.to) });
    return;
  }
  if (panel.visualization === "heatmap") note(card, "The query has no HEATMAP calculation: drawn as lines.");
  const name = valueNames(data, panel)[0];
  const bars = panel.visualization === "bars";
  el.dataset.chart = bars ? "bars" : "lines";
  timeChart(el, data.series.map((b) => b.time), lines(data, name), {
    yLabel: name,
    height: 220,
    stacked: bars,
    span: state.span,
    onZoom: zoomTo,
  });
}

function drawNumber(card, panel, data) {
  const el = card.querySelector("[data-panel-number]");
  el.hidden = false;
  if (!data.aggregates) {
    el.textContent = formatNumber(data.count);
    el.title = "events";
    return;
  }
  const name = panel.values[0];
  const first = data.aggregates[0];
  const value = first ? first.values[name] : ZERO_WHEN_EMPTY.test(name) ? 0 : null;
  el.textContent = formatNumber(value);
  el.title = name;
  const groups = data.aggregates.length;
  if (groups > 1) note(card, `${name} of ${groupLabel(first.groups)}, the first of ${groups} groups`);
  else note(card, name);
}

function cell(row, text, header = false) {
  const el = document.createElement(header ? "th" : "td");
  el.textContent = text;
  row.append(el);
  return el;
}

function drawTable(card, panel, data) {
  const wrap = card.querySelector("[data-panel-table]");
  const table = wrap.querySelector("table");
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  const body = table.createTBody();
  if (data.aggregates) {
    const names = valueNames(data, panel);
    const groupKeys = Object.keys(data.aggregates[0]?.groups ?? {});
    groupKeys.forEach((k) => cell(head, k, true));
    names.forEach((n) => cell(head, n, true).classList.add("num"));
    for (const agg of data.aggregates) {
      const row = body.insertRow();
      groupKeys.forEach((k) => cell(row, groupValue(agg.groups[k])));
      names.forEach((n) => cell(row, formatNumber(agg.values[n])).classList.add("num"));
    }
  } else {
    ["Time", "Service", "Event"].forEach((h) => cell(head, h, true));
    for (const event of data.events) {
      const row = body.insertRow();
      cell(row, localTime(event._timestamp, true));
      cell(row, event._service ?? "");
      const rest = Object.fromEntries(Object.entries(event).filter(([k]) => !k.startsWith("_")));
      cell(row, JSON.stringify(rest)).className = "message";
    }
  }
  wrap.hidden = false;
}

function drawPanel(card, panel) {
  const data = panel.data;
  if (!data) return; // its error is on the page already
  const charted = ["line", "bars", "heatmap"].includes(panel.visualization);
  if (panel.visualization === "number") drawNumber(card, panel, data);
  else if (charted && data.series && valueNames(data, panel).length) drawChart(card, panel, data);
  else {
    if (charted) note(card, "The query lists events: shown as a table.");
    drawTable(card, panel, data);
  }
  if (data.aggregates && !data.aggregates.length && panel.visualization !== "number") {
    note(card, "No events match in this timeframe.");
  }
}

for (const panel of state?.panels ?? []) {
  const card = document.querySelector(`[data-panel="${CSS.escape(panel.id)}"]`);
  if (card) drawPanel(card, panel);
}
