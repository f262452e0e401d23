// The query builder's run: started with the page's address, polled until it settles,
// then drawn: stacked bars per group for a count, a line per group for any other value,
// a heatmap for HEATMAP (a region dragged on it asks BubbleUp what sets it apart), and
// the aggregates.
import { formAddress, localTime } from "./console.js";
import { MISSING, formatNumber, heatmapChart, readData, timeChart } from "./charts.js";

const state = readData("builder-state");
const status = document.querySelector("[data-run-status]");
const chartCard = document.querySelector("[data-chart-card]");
const tableCard = document.querySelector("[data-table-card]");
const table = document.getElementById("result-table");
const chartEl = document.getElementById("series-chart");
const pick = document.getElementById("value-pick");
// Values that are 0 over no events; the others have no value there.
const ZERO_WHEN_EMPTY = /^(COUNT|COUNT_DISTINCT|SUM)(\(|$)/;

function say(text, kind = "") {
  status.textContent = text;
  status.className = `run-status ${kind}`;
}

function sayErrors(body) {
  say(body.reason || body.message || "The query run failed.", "error");
  if (body.errors?.length) {
    const list = document.createElement("ul");
    for (const e of body.errors) {
      const li = document.createElement("li");
      li.textContent = e.field ? `${e.field}: ${e.message}` : e.message;
      list.append(li);
    }
    status.append(list);
  }
}

async function call(url, options = {}) {
  const response = await fetch(url, { ...options, headers: { Accept: "application/json", ...options.headers } });
  const body = await response.json().catch(() => ({ message: `The server answered ${response.status}.` }));
  if (!response.ok) throw body;
  return body;
}

// A group's label, the same in the legend and the table (a missing value reads MISSING).
const groupValue = (v) => (v == null ? MISSING : String(v));
const groupLabel = (groups) => {
  const values = Object.entries(groups ?? {});
  if (!values.length) return "all events";
  return values.map(([k, v]) => (values.length === 1 ? groupValue(v) : `${k}=${groupValue(v)}`)).join(" · ");
};

function cell(row, text, header = false) {
  const el = document.createElement(header ? "th" : "td");
  el.textContent = text;
  row.append(el);
  return el;
}

const show = (v) => (typeof v === "number" || v == null ? formatNumber(v) : String(v));

function drawTable(data, names) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  if (data.aggregates) {
    const groupKeys = Object.keys(data.aggregates[0]?.groups ?? {});
    groupKeys.forEach((k) => cell(head, k, true));
    // A HEATMAP's value in a group is how many of its events hold a number at the key.
    const heatmap = heatmapName();
    names.forEach((n) => cell(head, n === heatmap ? `${n}: events` : n, true).classList.add("num"));
    const body = table.createTBody();
    for (const agg of data.aggregates) {
      const row = body.insertRow();
      groupKeys.forEach((k) => cell(row, groupValue(agg.groups[k])));
      names.forEach((n) => cell(row, show(agg.values[n])).classList.add("num"));
    }
  } else {
    ["Time", "Service", "Event"].forEach((h) => cell(head, h, true));
    const body = table.createTBody();
    for (const event of data.events) {
      const row = body.insertRow();
      cell(row, localTime(event._timestamp, true));
      cell(row, event._service ?? "");
      const rest = Object.fromEntries(Object.entries(event).filter(([k]) => !k.startsWith("_")));
      cell(row, JSON.stringify(rest)).className = "message";
    }
  }
  tableCard.hidden = false;
}

// The value name of the query's HEATMAP, if it has one.
const heatmapName = () => {
  const calc = (state?.spec?.calculations ?? []).find((c) => c.operator === "HEATMAP");
  return calc ? calc.alias || `HEATMAP(${calc.key})` : null;
};

// The timeframe the series covers: every bucket, the last one whole.
function span(series) {
  if (!series.length) return undefined;
  const step = series.length > 1 ? series[1].time - series[0].time : 60_000;
  return [series[0].time, series[series.length - 1].time + step];
}

function drawChart(data, name) {
  chartEl.replaceChildren();
  chartCard.hidden = false;
  if (name === heatmapName() && data.series.some((p) => p.buckets)) {
    const key = state.spec.calculations.find((c) => c.operator === "HEATMAP").key;
    chartEl.dataset.chart = "heatmap";
    heatmapChart(chartEl, data.series, {
      span: span(data.series),
      yLabel: key,
      onSelect: (region) => bubbleUp({ ...region, key }),
    });
    return;
  }
  chartEl.dataset.chart = ZERO_WHEN_EMPTY.test(name) ? "bars" : "lines";
  const order = data.aggregates.map((a) => groupLabel(a.groups));
  const lines = new Map(order.map((label) => [label, data.series.map(() => null)]));
  const zero = ZERO_WHEN_EMPTY.test(name);
  data.series.forEach((bucket, i) => {
    if (zero) for (const values of lines.values()) values[i] = 0;
    for (const row of bucket.data) {
      const label = groupLabel(row.groups);
      if (!lines.has(label)) lines.set(label, data.series.map(() => (zero ? 0 : null)));
      lines.get(label)[i] = row.aggregates[name] ?? null;
    }
  });
  const drawn = [...lines].map(([label, values]) => ({ label, values }));
  // Counts add up across groups: stacked bars; any other value is a line per group.
  timeChart(chartEl, data.series.map((b) => b.time), drawn, {
    yLabel: name,
    stacked: zero && name.startsWith("COUNT") && !name.startsWith("COUNT_DISTINCT"),
    span: span(data.series),
  });
}

// -- BubbleUp: what sets the events of a region apart from the query's other events ------

const bubbleCard = document.querySelector("[data-bubble-card]");

// A filter value as the form writes it (query_form.format_value): a string that would
// read as JSON ("200", "true") is quoted, so it stays a string.
function formValue(value) {
  if (value == null) return "";
  if (typeof value !== "string") return JSON.stringify(value);
  try {
    JSON.parse(value);
  } catch {
    return value;
  }
  return JSON.stringify(value);
}

// The builder's address with filters added: [[operation, value], ...] on one key.
function filterLink(key, conditions) {
  const url = new URL(location.href);
  for (const [operation, value] of conditions) {
    url.searchParams.append("fk", key);
    url.searchParams.append("fo", operation);
    url.searchParams.append("fv", formValue(value));
  }
  return url.toString();
}

// A value of a BubbleUp dimension: a string, number or boolean, a number's range
// {from, to} (either open), or null for "the key is missing"; as text and as filters.
function valueText(value) {
  if (value == null) return `${MISSING} (missing)`;
  if (typeof value === "object") {
    const low = value.from == null ? "" : formatNumber(value.from);
    const high = value.to == null ? "" : formatNumber(value.to);
    return low && high ? `${low} – ${high}` : low ? `≥ ${low}` : `< ${high}`;
  }
  return typeof value === "number" ? formatNumber(value) : String(value);
}

function valueFilters(value) {
  if (value == null) return [["DOES_NOT_EXIST", null]];
  if (typeof value === "object") {
    const out = [];
    if (value.from != null) out.push([">=", value.from]);
    if (value.to != null) out.push(["<", value.to]);
    return out;
  }
  return [["=", value]];
}

function bar(share, kind) {
  const meter = document.createElement("span");
  meter.className = `share ${kind}`;
  meter.dataset.share = String(share);
  // Width through the CSSOM: the CSP allows no inline styles.
  meter.style.setProperty("--share", String(Math.max(0, Math.min(1, share))));
  return meter;
}

const percent = (share) => `${formatNumber(Math.round(share * 1000) / 10)}%`;

function drawBubbleUp(answer, region) {
  const list = bubbleCard.querySelector("[data-bubble-list]");
  const note = bubbleCard.querySelector("[data-bubble-note]");
  list.replaceChildren();
  const range = `${region.key} ${formatNumber(region.min)} – ${formatNumber(region.max)}, ${localTime(region.from)} – ${localTime(region.to)}`;
  note.textContent = `${formatNumber(answer.selection)} selected events (${range}) against ${formatNumber(answer.baseline)} others${answer.sampled ? `; shares of a sample of ${formatNumber(answer.sample.selection)} and ${formatNumber(answer.sample.baseline)}` : ""}.`;
  for (const dim of answer.dimensions) {
    const item = document.createElement("li");
    item.className = "dimension";
    item.dataset.key = dim.key;
    const head = document.createElement("h3");
    head.textContent = dim.key;
    const score = document.createElement("span");
    score.className = "muted";
    score.textContent = ` differs by ${percent(dim.score)}`;
    head.append(score);
    const rows = document.createElement("table");
    rows.className = "bubble-values";
    for (const v of dim.values) {
      const row = rows.insertRow();
      const name = row.insertCell();
      const link = document.createElement("a");
      link.href = filterLink(dim.key, valueFilters(v.value));
      link.textContent = valueText(v.value);
      link.title = `Filter on ${dim.key}: ${link.textContent}`;
      link.dataset.filter = "";
      name.append(link);
      const shares = row.insertCell();
      shares.append(bar(v.selection, "selection"), bar(v.baseline, "baseline"));
      row.insertCell().textContent = `${percent(v.selection)} selected · ${percent(v.baseline)} others`;
    }
    item.append(head, rows);
    list.append(item);
  }
  bubbleCard.hidden = false;
}

async function bubbleUp(region) {
  const note = bubbleCard.querySelector("[data-bubble-note]");
  bubbleCard.hidden = false;
  note.textContent = "Comparing the selection with the other events…";
  const body = new URLSearchParams(state.address.replace(/^\?/, ""));
  for (const [k, v] of Object.entries({ sf: region.from, st: region.to, sk: region.key, smin: region.min, smax: region.max })) {
    body.set(k, String(v));
  }
  try {
    const answer = await call(state.bubble, {
      method: "POST",
      headers: { "X-CSRF-Token": state.csrf, "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    });
    drawBubbleUp(answer, region);
    bubbleCard.scrollIntoView({ block: "nearest" });
  } catch (failure) {
    note.textContent = failure.reason || failure.message || "BubbleUp failed.";
  }
}

function draw(data) {
  const names = data.aggregates?.length ? Object.keys(data.aggregates[0].values).filter((n) => n !== "_count") : [];
  if (data.aggregates) {
    pick.replaceChildren(...names.map((n) => new Option(n, n)));
    pick.closest("[data-value-pick]").hidden = names.length < 2;
    if (names.length) drawChart(data, names[0]);
    else chartCard.hidden = true;
    pick.onchange = () => drawChart(data, pick.value);
    const groups = data.aggregates.length;
    say(groups ? `${groups} group${groups === 1 ? "" : "s"} · ${data.statistics.elapsed.toFixed(3)} s` : "No events match in this timeframe.");
  } else {
    chartCard.hidden = true;
    say(`${data.count} events · ${data.statistics.elapsed.toFixed(3)} s`);
  }
  drawTable(data, names);
}

async function run() {
  say("Running…", "running");
  chartCard.hidden = true;
  tableCard.hidden = true;
  try {
    let answer = await call(state.url, {
      method: "POST",
      headers: { "X-CSRF-Token": state.csrf, "Content-Type": "application/x-www-form-urlencoded" },
      body: state.address.replace(/^\?/, ""),
    });
    while (answer.query_run.status === "STARTED") {
      say("Running… (a large timeframe takes a while)", "running");
      answer = await call(`${state.poll}${answer.query_run.id}?wait=10`);
    }
    if (answer.query_run.status === "FAILED") sayErrors({ reason: `The query run failed: ${answer.query_run.error}` });
    else draw(answer.data);
    // The result, in view: below a long form it would go unseen.
    if (status.getBoundingClientRect().top > innerHeight * 0.6) status.scrollIntoView();
  } catch (body) {
    sayErrors(body instanceof Error ? { message: `The run could not be started: ${body.message}` } : body);
  }
}

if (state?.run) run();

// Saving saves what the builder shows now, even if it was changed since it ran.
const builder = document.getElementById("builder");
for (const form of document.querySelectorAll("form[data-save]")) {
  form.addEventListener("submit", () => {
    form.querySelector("input[name=builder]").value = formAddress(builder).toString();
  });
}
