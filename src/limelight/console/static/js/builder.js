// The query builder's run: started with the page's address, polled until it settles,
// then drawn: a line per group for the chosen value over time, and the aggregates.
import { formAddress, localTime } from "./console.js";
import { readData, timeChart } from "./charts.js";

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

const groupLabel = (groups) => {
  const values = Object.entries(groups ?? {});
  if (!values.length) return "all events";
  return values.map(([k, v]) => (values.length === 1 ? String(v) : `${k}=${v}`)).join(" · ");
};

function cell(row, text, header = false) {
  const el = document.createElement(header ? "th" : "td");
  el.textContent = text;
  row.append(el);
  return el;
}

const show = (v) => (v == null ? "—" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : String(v));

function drawTable(data, names) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  if (data.aggregates) {
    const groupKeys = Object.keys(data.aggregates[0]?.groups ?? {});
    groupKeys.forEach((k) => cell(head, k, true));
    names.forEach((n) => cell(head, n, true).classList.add("num"));
    const body = table.createTBody();
    for (const agg of data.aggregates) {
      const row = body.insertRow();
      groupKeys.forEach((k) => cell(row, show(agg.groups[k])));
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

function drawChart(data, name) {
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
  chartEl.replaceChildren();
  chartCard.hidden = false;
  const drawn = [...lines].map(([label, values]) => ({ label, values }));
  timeChart(chartEl, data.series.map((b) => b.time), drawn, { yLabel: name });
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
