"use strict";
// The transcript browser of deedbench's HTML report (inlined by reports/html.py).
// Every string from the data is put into the page with textContent or as an attribute
// value through setAttribute on inert attributes: never parsed as HTML.
(function () {
  const DATA = JSON.parse(document.getElementById("deedbench-data").textContent);
  const RUNS = DATA.runs;
  const TEXTS = DATA.texts;
  const EPISODES = DATA.episodes;
  const PAGE = 100;
  const SCORED = "(scored)";
  const ERROR = "(error)";
  const GROUP_KEYS = [...new Set(RUNS.flatMap((r) => r.group_by))];
  const state = { limit: PAGE, open: -1 };
  const controls = {};

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = String(value);
      else if (name === "class") node.className = value;
      else node.setAttribute(name, String(value));
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  function uniqueSorted(values) {
    return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  function select(name, label, options) {
    const node = h("select", { id: "filter-" + name, name: name, "data-filter-name": name });
    node.append(h("option", { value: "", text: "all" }));
    for (const [value, text] of options) node.append(h("option", { value: value, text: text }));
    node.addEventListener("change", () => update());
    controls[name] = node;
    return h("label", { class: "filter" }, h("span", { text: label }), node);
  }

  function buildFilters() {
    const form = document.getElementById("filters");
    const agents = RUNS.map((r) => r.agent);
    form.append(
      select(
        "run",
        "model",
        RUNS.map((r) => [
          r.id,
          agents.filter((a) => a === r.agent).length > 1 || RUNS.length > 1
            ? r.agent + " · " + r.id
            : r.agent,
        ]),
      ),
    );
    const conditions = uniqueSorted(EPISODES.map((e) => e.condition));
    form.append(select("condition", "condition", conditions.map((c) => [c, c])));
    for (const key of GROUP_KEYS) {
      const values = uniqueSorted(
        EPISODES.filter((e) => key in e.groups).map((e) => e.groups[key]),
      );
      form.append(select("group:" + key, key, values.map((v) => [v, v])));
    }
    const outcomes = uniqueSorted(EPISODES.filter((e) => e.outcome !== null).map((e) => e.outcome));
    form.append(
      select("outcome", "outcome", [
        [SCORED, "any scored outcome"],
        ...outcomes.map((o) => [o, o]),
        [ERROR, "errors (not scored)"],
      ]),
    );
    const metrics = [];
    for (const run of RUNS) {
      for (const m of run.metrics) {
        if (!metrics.some((x) => x[0] === m.name)) {
          metrics.push([m.name, m.given ? m.name + " (" + m.given + " = 1)" : m.name]);
        }
      }
    }
    form.append(select("counted", "counted in rate", metrics));
    const search = h("input", { type: "search", id: "filter-search", placeholder: "sample id contains" });
    search.addEventListener("input", () => update());
    controls.search = search;
    form.append(h("label", { class: "filter" }, h("span", { text: "sample" }), search));
    const reset = h("button", { type: "button", id: "filter-reset", text: "clear filters" });
    reset.addEventListener("click", () => applyFilter({}));
    form.append(reset);
  }

  function ensureOption(node, value) {
    if (![...node.options].some((o) => o.value === value)) {
      node.append(h("option", { value: value, text: value }));
    }
  }

  function applyFilter(where) {
    for (const [name, node] of Object.entries(controls)) node.value = "";
    const set = (name, value) => {
      if (value === undefined || value === null || !controls[name]) return;
      ensureOption(controls[name], value);
      controls[name].value = value;
    };
    set("run", where.run);
    set("condition", where.condition);
    set("outcome", where.outcome);
    set("counted", where.counted);
    for (const [key, value] of Object.entries(where.group || {})) set("group:" + key, value);
    update();
  }

  function matches(ep) {
    const v = (name) => controls[name].value;
    if (v("run") && RUNS[ep.run].id !== v("run")) return false;
    if (v("condition") && ep.condition !== v("condition")) return false;
    for (const key of GROUP_KEYS) {
      const want = v("group:" + key);
      if (want && ep.groups[key] !== want) return false;
    }
    const outcome = v("outcome");
    if (outcome === SCORED && ep.status !== "scored") return false;
    if (outcome === ERROR && ep.status !== "error") return false;
    if (outcome && outcome !== SCORED && outcome !== ERROR && ep.outcome !== outcome) return false;
    if (v("counted") && !ep.counted.includes(v("counted"))) return false;
    const text = controls.search.value.trim().toLowerCase();
    if (text && !ep.sample.toLowerCase().includes(text)) return false;
    return true;
  }

  function outcomeOf(ep) {
    return ep.status === "error" ? "error" : ep.outcome || "?";
  }

  function update() {
    state.limit = PAGE;
    render();
  }

  function render() {
    const chosen = [];
    EPISODES.forEach((ep, i) => {
      if (matches(ep)) chosen.push(i);
    });
    const counts = {};
    for (const i of chosen) {
      const o = outcomeOf(EPISODES[i]);
      counts[o] = (counts[o] || 0) + 1;
    }
    const summary = document.getElementById("match-summary");
    summary.replaceChildren(
      h("strong", { id: "match-count", "data-count": chosen.length, text: chosen.length }),
      " of " + EPISODES.length + " episodes",
      ...Object.keys(counts)
        .sort()
        .map((o) => h("span", { class: "chip outcome-" + cssName(o), "data-outcome": o, text: o + " " + counts[o] })),
    );
    const list = document.getElementById("episode-list");
    const body = h("tbody");
    for (const i of chosen.slice(0, state.limit)) body.append(listRow(i));
    const table = h(
      "table",
      { class: "episodes" },
      h("thead", {}, h("tr", {}, ...["episode", "outcome", "choice"].map((t) => h("th", { text: t })))),
      body,
    );
    list.replaceChildren(table);
    if (chosen.length > state.limit) {
      const more = h("button", { type: "button", id: "show-more", text: "show " + Math.min(PAGE, chosen.length - state.limit) + " more" });
      more.addEventListener("click", () => {
        state.limit += PAGE;
        render();
      });
      list.append(more);
    }
  }

  function cssName(text) {
    return String(text).replace(/[^A-Za-z0-9_-]/g, "_");
  }

  function listRow(i) {
    const ep = EPISODES[i];
    const choice = ep.choice === null ? "" : ep.choice;
    const where = (RUNS.length > 1 ? RUNS[ep.run].agent + " · " : "") + ep.condition + " · epoch " + ep.epoch;
    const row = h(
      "tr",
      { class: "episode-row" + (i === state.open ? " open" : ""), tabindex: 0, "data-episode": i, "data-sample": ep.sample },
      h(
        "td",
        { class: "episode", title: ep.sample },
        h("span", { class: "sample", text: ep.sample }),
        h("span", { class: "sub", text: where }),
      ),
      h("td", {}, h("span", { class: "chip outcome-" + cssName(outcomeOf(ep)), text: outcomeOf(ep) })),
      h("td", { class: "choice", text: choice, title: choice }),
    );
    const open = () => showEpisode(i);
    row.addEventListener("click", open);
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open();
      }
    });
    return row;
  }

  function pretty(text) {
    // Tool-call arguments as written, indented; as they are when parsing would round a
    // number (an id beyond 2^53) or when they are no JSON.
    try {
      const value = JSON.parse(text);
      return exact(value) ? JSON.stringify(value, null, 2) : text;
    } catch (error) {
      return text;
    }
  }

  function exact(value) {
    if (typeof value === "number") return !Number.isInteger(value) || Number.isSafeInteger(value);
    if (value && typeof value === "object") return Object.values(value).every(exact);
    return true;
  }

  function facts(pairs) {
    const list = h("dl", { class: "facts" });
    for (const [name, value] of pairs) {
      if (value === null || value === undefined || value === "") continue;
      list.append(h("dt", { text: name }), h("dd", { text: typeof value === "string" ? value : JSON.stringify(value) }));
    }
    return list;
  }

  function showEpisode(i) {
    state.open = i;
    for (const row of document.querySelectorAll(".episode-row")) {
      row.classList.toggle("open", row.getAttribute("data-episode") === String(i));
    }
    const ep = EPISODES[i];
    const run = RUNS[ep.run];
    const deciding = new Set(ep.evidence.map((e) => e.tool_call_id).filter((x) => x));
    const cited = new Set(ep.evidence.map((e) => e.message_index).filter((x) => x !== null));
    const detail = document.getElementById("episode-detail");
    const values = Object.entries(ep.values).map(([k, v]) => k + " " + v).join(", ");
    const usage = Object.entries(ep.usage)
      .map(([role, u]) => role + ": " + u.calls + " calls, " + u.input_tokens + " in / " + u.output_tokens + " out")
      .join("; ");
    const parts = [
      h("h3", { text: ep.sample }),
      h(
        "p",
        { class: "episode-head" },
        h("span", { class: "chip outcome-" + cssName(outcomeOf(ep)), text: outcomeOf(ep) }),
        " " + run.agent + " · run " + run.id + " · " + ep.condition + " · epoch " + ep.epoch,
      ),
      facts([
        ["status", ep.status],
        ["ended", ep.termination],
        ["steps", String(ep.steps)],
        ["seed", String(ep.seed)],
        ["duration", ep.duration + " s"],
        ["values", values],
        ["choice", ep.choice],
        ["chance", ep.chance === null ? null : (100 * ep.chance).toFixed(1) + "%"],
        ["usage", usage],
        ["error", ep.error],
      ]),
    ];
    if (ep.evidence.length) {
      const items = h("ol", { class: "evidence-list" });
      for (const e of ep.evidence) {
        const where = [];
        if (e.message_index !== null) where.push("message " + e.message_index);
        if (e.tool_call_id) where.push("call " + e.tool_call_id);
        const item = h(
          "li",
          { class: "evidence", "data-rule": e.rule || "" },
          h("span", { class: "rule", text: e.rule || "verdict" }),
          where.length ? " " + where.join(", ") + ": " : " ",
          h("span", { class: "excerpt", text: e.excerpt }),
        );
        if (e.message_index !== null) {
          const go = h("button", { type: "button", class: "go", text: "show" });
          go.addEventListener("click", () => {
            const target = document.getElementById("msg-" + e.message_index);
            if (target) target.scrollIntoView({ block: "center" });
          });
          item.append(" ", go);
        }
        items.append(item);
      }
      parts.push(h("div", { class: "evidence-box" }, h("h4", { text: "Evidence the score rests on" }), items));
    }
    parts.push(h("details", { class: "metadata" }, h("summary", { text: "sample metadata" }), facts(Object.entries(ep.metadata))));
    const messages = h("div", { class: "messages" });
    ep.messages.forEach((m, index) => messages.append(message(m, index, deciding, cited)));
    parts.push(h("h4", { text: ep.messages.length + " messages" }), messages);
    detail.replaceChildren(...parts);
    detail.scrollTop = 0;
  }

  function message(m, index, deciding, cited) {
    const isCited = cited.has(index);
    const head = h(
      "div",
      { class: "msg-head" },
      h("span", { class: "msg-index", text: "#" + index }),
      " ",
      h("span", { class: "msg-role", text: m.role }),
    );
    if (m.role === "tool") {
      head.append(" ← " + (m.tool || "?") + (m.error ? " (error)" : ""));
      if (deciding.has(m.call_id)) head.append(h("span", { class: "badge", text: "result of the deciding call" }));
    }
    if (isCited) head.append(h("span", { class: "badge cited-badge", text: "★ cited by the score" }));
    const box = h("div", { class: "msg role-" + cssName(m.role) + (isCited ? " cited" : "") + (m.error ? " tool-error" : ""), id: "msg-" + index, "data-index": index }, head);
    if (m.reasoning !== null) {
      box.append(h("details", { class: "reasoning" }, h("summary", { text: "reasoning" }), h("pre", { text: TEXTS[m.reasoning] })));
    }
    const content = TEXTS[m.content];
    if (content) box.append(h("pre", { class: "content", text: content }));
    for (const call of m.calls) {
      const isDeciding = deciding.has(call.id);
      box.append(
        h(
          "div",
          { class: "call" + (isDeciding ? " deciding" : "") + (call.run ? "" : " not-run"), "data-call-id": call.id },
          isDeciding ? h("span", { class: "badge deciding-badge", text: "★ deciding call" }) : null,
          call.run ? null : h("span", { class: "badge", text: "not run (the benchmark runs a turn's first call only)" }),
          h("span", { class: "call-name", text: "→ " + call.name }),
          h("span", { class: "call-id", text: " id " + call.id }),
          h("pre", { class: "call-args", text: pretty(call.arguments) }),
        ),
      );
    }
    return box;
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("[data-filter]");
    if (!link) return;
    event.preventDefault();
    applyFilter(JSON.parse(link.getAttribute("data-filter")));
    document.getElementById("episodes").scrollIntoView();
  });

  buildFilters();
  render();
})();
