"use strict";
// The transcript browser of deedbench's HTML report (inlined by reports/html/page.py after
// transcript.js, which builds each episode's messages). Every string from the data is put
// into the page with textContent or as an attribute value through setAttribute on inert
// attributes: never parsed as HTML.
(function () {
  const { h, cssName, outcomeOf, chip, facts, episodeFacts, evidenceBox, transcript, revealDetail, searchBoxes } = deedbenchTranscript;
  const DATA = JSON.parse(document.getElementById("deedbench-data").textContent);
  const RUNS = DATA.runs;
  const TEXTS = DATA.texts;
  const EPISODES = DATA.episodes;
  const PAGE = 100;
  const SCORED = "(scored)";
  const ERROR = "(error)";
  const GROUP_KEYS = [...new Set(RUNS.flatMap((r) => r.group_by))];
  // order: the episodes the filters chose (in pair mode, the variant of each pair), which
  // the keyboard and the next/previous buttons step through.
  const state = { limit: PAGE, open: -1, order: [], pairs: false };
  const controls = {};
  let lowered = null; // TEXTS in lower case, made at the first search

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
    const faults = uniqueSorted(EPISODES.flatMap((e) => e.faults || []));
    if (faults.length) form.append(select("fault", "whose failure, faults found", faults.map((f) => [f, faultLabel(f)])));
    const audits = uniqueSorted(EPISODES.flatMap((e) => e.audit || []));
    if (audits.length) form.append(select("audit", "eval-awareness audit", audits.map((a) => [a, auditLabel(a)])));
    const variants = uniqueSorted(EPISODES.filter((e) => e.pair).map((e) => e.pair.variant));
    if (variants.length) {
      const pairs = variants.flatMap((v) => [
        [pairValue(v, false), v + " vs base: every pair"],
        [pairValue(v, true), v + " vs base: flipped pairs"],
      ]);
      form.append(select("pairs", "flip pairs", pairs));
    }
    const boxes = searchBoxes(form, 150, update);
    controls.search = boxes.sample;
    controls.text = boxes.words;
    const reset = h("button", { type: "button", id: "filter-reset", text: "clear filters" });
    reset.addEventListener("click", () => applyFilter({}));
    form.append(reset);
  }

  function faultLabel(value) {
    const at = value.indexOf(":");
    const kind = value.slice(0, at);
    const rest = value.slice(at + 1);
    return kind === "party" ? "the " + rest + "'s failure" : "fault found: " + rest;
  }

  function auditLabel(value) {
    const at = value.indexOf(":");
    const kind = value.slice(0, at);
    const judge = value.slice(at + 1);
    if (kind === "aware") return "judged aware by " + judge;
    return "flagged by the scanner" + (judge ? " (audit by " + judge + ")" : "");
  }

  function pairValue(variant, flipped) {
    return JSON.stringify([variant, flipped]);
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
    set("audit", where.audit);
    set("fault", where.fault);
    if (where.flip !== undefined) set("pairs", pairValue(where.flip, Boolean(where.flipped)));
    for (const [key, value] of Object.entries(where.group || {})) set("group:" + key, value);
    update();
  }

  function searched(ep, needle) {
    // Any text of its messages: contents (tool results too), reasoning, tool names, calls.
    if (lowered === null) lowered = TEXTS.map((t) => t.toLowerCase());
    for (const m of ep.messages) {
      if (m.content !== null && lowered[m.content].includes(needle)) return true;
      if (m.reasoning !== null && lowered[m.reasoning].includes(needle)) return true;
      if (m.tool && m.tool.toLowerCase().includes(needle)) return true;
      for (const c of m.calls) {
        if (c.name.toLowerCase().includes(needle) || c.arguments.toLowerCase().includes(needle)) return true;
      }
    }
    return false;
  }

  function pairFilter() {
    return controls.pairs && controls.pairs.value ? JSON.parse(controls.pairs.value) : null;
  }

  function flipped(ep) {
    return ep.choice !== EPISODES[ep.pair.base].choice;
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
    if (controls.audit && v("audit") && !(ep.audit || []).includes(v("audit"))) return false;
    if (controls.fault && v("fault") && !(ep.faults || []).includes(v("fault"))) return false;
    const pair = pairFilter();
    if (pair && !(ep.pair && ep.pair.variant === pair[0] && (!pair[1] || flipped(ep)))) return false;
    const text = controls.search.value.trim().toLowerCase();
    if (text && !ep.sample.toLowerCase().includes(text)) return false;
    const words = needle();
    if (words && !searched(ep, words)) return false;
    return true;
  }

  function needle() {
    return controls.text.value.trim().toLowerCase();
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
    state.order = chosen;
    state.pairs = pairFilter() !== null;
    document.querySelector(".browser").classList.toggle("pair-mode", state.pairs);
    const summary = document.getElementById("match-summary");
    const count = h("strong", { id: "match-count", "data-count": chosen.length, text: chosen.length });
    if (state.pairs) {
      const pair = pairFilter();
      const turned = chosen.filter((i) => flipped(EPISODES[i])).length;
      const base = RUNS[EPISODES[chosen[0]] ? EPISODES[chosen[0]].run : 0].flip_base || "base";
      summary.replaceChildren(
        count,
        " pairs of " + base + " and " + pair[0] + " episodes (same cluster and epoch):",
        h("span", { class: "chip flipped", "data-flipped": turned, text: turned + " flipped" }),
      );
    } else {
      const counts = {};
      for (const i of chosen) {
        const o = outcomeOf(EPISODES[i]);
        counts[o] = (counts[o] || 0) + 1;
      }
      summary.replaceChildren(
        count,
        " of " + EPISODES.length + " episodes",
        ...Object.keys(counts)
          .sort()
          .map((o) => h("span", { class: "chip outcome-" + cssName(o), "data-outcome": o, text: o + " " + counts[o] })),
      );
    }
    const list = document.getElementById("episode-list");
    const body = h("tbody");
    for (const i of chosen.slice(0, state.limit)) body.append(state.pairs ? pairRow(i) : listRow(i));
    const heads = state.pairs ? ["pair: the base variant's choice and this variant's"] : ["episode", "outcome", "choice"];
    const table = h(
      "table",
      { class: "episodes" },
      h("thead", {}, h("tr", {}, ...heads.map((t) => h("th", { text: t })))),
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
    return opener(row, i);
  }

  function pairRow(i) {
    const ep = EPISODES[i];
    const base = EPISODES[ep.pair.base];
    const turned = flipped(ep);
    const where = (RUNS.length > 1 ? RUNS[ep.run].agent + " · " : "") + ep.condition + " · epoch " + ep.epoch;
    const choice = (name, e) =>
      h("span", { class: "pair-choice-line " + name, title: e.sample }, name + " ", h("strong", { class: "pair-choice", text: e.choice }), " ", h("span", { class: "chip outcome-" + cssName(outcomeOf(e)), text: outcomeOf(e) }));
    const row = h(
      "tr",
      { class: "episode-row pair-row" + (turned ? " flipped" : "") + (i === state.open ? " open" : ""), tabindex: 0, "data-episode": i, "data-base": ep.pair.base, "data-sample": ep.sample },
      h(
        "td",
        { class: "episode", title: base.sample + " / " + ep.sample },
        h("span", { class: "sample", text: ep.sample }),
        h("span", { class: "sub", text: where + (turned ? " · flipped" : " · same choice") }),
        choice("base", base),
        choice("variant", ep),
      ),
    );
    return opener(row, i);
  }

  function opener(row, i) {
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

  function ref(ep) {
    return [RUNS[ep.run].id, ep.condition, String(ep.epoch), ep.sample].map(encodeURIComponent).join("/");
  }

  function fromRef(text) {
    return EPISODES.findIndex((ep) => ref(ep) === text);
  }

  function showEpisode(i, reveal = true) {
    state.open = i;
    for (const row of document.querySelectorAll(".episode-row")) {
      row.classList.toggle("open", row.getAttribute("data-episode") === String(i));
    }
    const ep = EPISODES[i];
    const detail = document.getElementById("episode-detail");
    const position = state.order.indexOf(i);
    const step = (label, id, by) => {
      const to = position + by;
      const button = h("button", { type: "button", id: id, text: label, disabled: position >= 0 && (to < 0 || to >= state.order.length) });
      button.addEventListener("click", () => move(by));
      return button;
    };
    const nav = h(
      "p",
      { class: "episode-nav" },
      step("← previous", "episode-prev", -1),
      " ",
      step("next →", "episode-next", 1),
      h("span", { class: "position", text: position < 0 ? " not among the filtered episodes" : " " + (position + 1) + " of " + state.order.length }),
      " ",
      h("a", { href: "#episode=" + ref(ep), class: "episode-link", text: "link to this episode" }),
    );
    if (state.pairs && ep.pair) {
      const base = EPISODES[ep.pair.base];
      const title = base.sample + " → " + ep.sample + (flipped(ep) ? ": the choice flipped" : ": the same choice");
      detail.replaceChildren(
        nav,
        h("h3", { class: "pair-title", text: title }),
        h("div", { class: "pair-grid" }, side("base", base), side("variant", ep)),
      );
    } else {
      detail.replaceChildren(nav, ...episodeParts(ep));
      history.replaceState(null, "", "#episode=" + ref(ep));
    }
    detail.scrollTop = 0;
    const mark = detail.querySelector("mark");
    if (mark) detail.scrollTop = mark.getBoundingClientRect().top - detail.getBoundingClientRect().top - 80;
    if (reveal) revealEpisode(i);
  }

  function side(name, ep) {
    return h(
      "div",
      { class: "pair-side side-" + name, "data-episode": EPISODES.indexOf(ep) },
      h("h4", {}, h("span", { class: "side-name", text: name + " " }), h("span", { class: "sample", text: ep.sample })),
      h(
        "p",
        { class: "episode-head" },
        h("span", { class: "chip outcome-" + cssName(outcomeOf(ep)), text: outcomeOf(ep) }),
        " choice ",
        h("strong", { class: "pair-choice", text: ep.choice === null ? "none" : ep.choice }),
        " · ",
        h("a", { href: "#episode=" + ref(ep), class: "episode-link", text: "open alone" }),
      ),
      ...episodeParts(ep).slice(2),
    );
  }

  function revealEpisode(i) {
    // The episode in view, and its row in the list's own scroll.
    revealDetail();
    const row = document.querySelector('.episode-row[data-episode="' + i + '"]');
    const list = document.getElementById("episode-list");
    if (row && list.scrollHeight > list.clientHeight) {
      const head = list.querySelector("thead").getBoundingClientRect().height;
      const at = row.getBoundingClientRect().top - list.getBoundingClientRect().top;
      if (at < head || at + row.offsetHeight > list.clientHeight) list.scrollTop += at - head - 4;
    }
  }

  function move(by) {
    if (!state.order.length) return;
    const position = state.order.indexOf(state.open);
    const next = position < 0 ? (by > 0 ? 0 : state.order.length - 1) : position + by;
    if (next < 0 || next >= state.order.length) return;
    if (next >= state.limit) {
      state.limit = (Math.floor(next / PAGE) + 1) * PAGE;
      render();
    }
    showEpisode(state.order[next]);
    const row = document.querySelector('.episode-row[data-episode="' + state.order[next] + '"]');
    if (row) row.focus({ preventScroll: true });
  }

  function openFromHash() {
    const match = /^#episode=(.+)$/.exec(window.location.hash);
    if (!match) return;
    const i = fromRef(match[1]);
    const detail = document.getElementById("episode-detail");
    if (i < 0) {
      detail.replaceChildren(h("p", { class: "note missing", text: "This report has no episode " + decodeURIComponent(match[1]).replace(/%2F/gi, "/") + "." }));
      document.getElementById("episodes").scrollIntoView();
      return;
    }
    if (i === state.open && !state.pairs) return;
    if (!matches(EPISODES[i]) || state.pairs) applyFilter({});
    const position = state.order.indexOf(i);
    if (position >= state.limit) {
      state.limit = (Math.floor(position / PAGE) + 1) * PAGE;
      render();
    }
    showEpisode(i);
  }

  function episodeParts(ep) {
    const run = RUNS[ep.run];
    const flags = ep.flags || [];
    const flagged = flags.map((f) => f.category + ' "' + f.match + '" (message ' + f.message_index + ")").join("; ");
    const words = needle();
    const marksOf = (index) => {
      const marks = flags.filter((f) => f.message_index === index).map((f) => [f.match.toLowerCase(), "flag", f.category]);
      if (words) marks.push([words, "found", "matches the transcript search"]);
      return marks;
    };
    return [
      h("h3", { text: ep.sample }),
      h("p", { class: "episode-head" }, chip(outcomeOf(ep)), " " + run.agent + " · run " + run.id + " · " + ep.condition + " · epoch " + ep.epoch),
      episodeFacts(ep, [
        ["audit flagged", flagged],
        ["whose failure", (ep.faults || []).filter((f) => f.startsWith("party:")).map(faultLabel).join("; ")],
        ["faults found", (ep.fault_notes || []).join(" | ")],
      ]),
      evidenceBox(ep),
      h("details", { class: "metadata" }, h("summary", { text: "sample metadata" }), facts(Object.entries(ep.metadata))),
      h("h4", { text: ep.messages.length + " messages" }),
      transcript(ep, TEXTS, marksOf),
    ].filter((part) => part !== null);
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("[data-filter]");
    if (!link) return;
    event.preventDefault();
    applyFilter(JSON.parse(link.getAttribute("data-filter")));
    document.getElementById("episodes").scrollIntoView();
  });

  document.addEventListener("keydown", (event) => {
    // j / k anywhere but in a field; the arrows on the episode list, where focus is.
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target.closest("input, select, textarea")) return;
    const onList = target.closest(".episode-row") !== null;
    const by = { j: 1, k: -1, ArrowDown: onList ? 1 : 0, ArrowUp: onList ? -1 : 0 }[event.key];
    if (!by) return;
    event.preventDefault();
    move(by);
  });
  window.addEventListener("hashchange", openFromHash);
  const bar = document.querySelector(".browser-bar");
  const barHeight = () => document.documentElement.style.setProperty("--bar-height", bar.offsetHeight + "px");
  new ResizeObserver(barHeight).observe(bar);

  function markWideTables() {
    // A table wider than the window scrolls sideways in its frame: say so at its edge,
    // and keep its row labels in sight (report.css: .scrolls).
    for (const wrap of document.querySelectorAll(".table-wrap")) {
      const wide = wrap.scrollWidth > wrap.clientWidth + 1;
      wrap.classList.toggle("scrolls", wide);
      if (wide) wrap.setAttribute("title", "wider than the window: scroll sideways for more columns");
      else wrap.removeAttribute("title");
    }
  }
  window.addEventListener("resize", markWideTables);

  buildFilters();
  render();
  barHeight();
  markWideTables();
  openFromHash();
})();
