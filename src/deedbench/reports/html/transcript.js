"use strict";
// One episode's transcript as deedbench shows it: the HTML report's browser (inlined before
// report.js) and `deedbench view` (served before view.js) both build it with these.
// Every string from the data goes into the page with textContent or through setAttribute
// on inert attributes: never parsed as HTML.
const deedbenchTranscript = (function () {
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

  function cssName(text) {
    return String(text).replace(/[^A-Za-z0-9_-]/g, "_");
  }

  function outcomeOf(ep) {
    return ep.status === "error" ? "error" : ep.outcome || "?";
  }

  function chip(outcome) {
    return h("span", { class: "chip outcome-" + cssName(outcome), text: outcome });
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

  function facts(pairs, cls) {
    const list = h("dl", { class: cls || "facts" });
    for (const [name, value] of pairs) {
      if (value === null || value === undefined || value === "") continue;
      list.append(h("dt", { text: name }), h("dd", { text: typeof value === "string" ? value : JSON.stringify(value) }));
    }
    return list;
  }

  function episodeFacts(ep, more) {
    const values = Object.entries(ep.values).map(([k, v]) => k + " " + v).join(", ");
    const usage = Object.entries(ep.usage)
      .map(([role, u]) => role + ": " + u.calls + " calls, " + u.input_tokens + " in / " + u.output_tokens + " out")
      .join("; ");
    return facts([
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
      ...(more || []),
    ]);
  }

  function evidenceBox(ep) {
    // Each cited message's "show" finds it beside the box: in the episode the box heads.
    if (!ep.evidence.length) return null;
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
          const root = go.closest(".evidence-box").parentElement;
          const target = root.querySelector('.msg[data-index="' + Number(e.message_index) + '"]');
          if (target) target.scrollIntoView({ block: "center" });
        });
        item.append(" ", go);
      }
      items.append(item);
    }
    return h("div", { class: "evidence-box" }, h("h4", { text: "Evidence the score rests on" }), items);
  }

  function marked(text, marks) {
    // The text as nodes, each occurrence (any case) of a mark's words in a <mark>; a mark
    // is [words in lower case, class, title].
    const lower = text.toLowerCase();
    const found = [];
    for (const [words, kind, title] of marks || []) {
      if (!words) continue;
      for (let at = lower.indexOf(words); at >= 0; at = lower.indexOf(words, at + words.length)) {
        found.push([at, at + words.length, kind, title]);
      }
    }
    found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const nodes = [];
    let done = 0;
    for (const [start, end, kind, title] of found) {
      if (start < done) continue;
      nodes.push(text.slice(done, start), h("mark", { class: kind, title: title, text: text.slice(start, end) }));
      done = end;
    }
    nodes.push(text.slice(done));
    return nodes;
  }

  function callBox(call, deciding, marks) {
    const isDeciding = deciding.has(call.id);
    return h(
      "div",
      { class: "call" + (isDeciding ? " deciding" : "") + (call.run ? "" : " not-run"), "data-call-id": call.id },
      isDeciding ? h("span", { class: "badge deciding-badge", text: "★ deciding call" }) : null,
      call.run ? null : h("span", { class: "badge", text: "not run (the benchmark runs a turn's first call only)" }),
      h("span", { class: "call-name", text: "→ " + call.name }),
      h("span", { class: "call-id", text: " id " + call.id }),
      h("pre", { class: "call-args" }, ...marked(pretty(call.arguments), marks)),
    );
  }

  function messageBox(m, index, deciding, cited, texts, marks) {
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
    const box = h(
      "div",
      { class: "msg role-" + cssName(m.role) + (isCited ? " cited" : "") + (m.error ? " tool-error" : ""), "data-index": index },
      head,
    );
    if (m.reasoning !== null) {
      const reasoning = h("details", { class: "reasoning" }, h("summary", { text: "reasoning" }), h("pre", {}, ...marked(texts[m.reasoning], marks)));
      reasoning.open = reasoning.querySelector("mark") !== null; // marked words are shown
      box.append(reasoning);
    }
    const content = texts[m.content];
    if (content) box.append(h("pre", { class: "content" }, ...marked(content, marks)));
    for (const call of m.calls) box.append(callBox(call, deciding, marks));
    return box;
  }

  function scoreMarks(ep) {
    return {
      deciding: new Set(ep.evidence.map((e) => e.tool_call_id).filter((x) => x)),
      cited: new Set(ep.evidence.map((e) => e.message_index).filter((x) => x !== null)),
    };
  }

  function transcript(ep, texts, marksOf) {
    // marksOf(index): the marks of message `index` (words searched for, words flagged).
    const { deciding, cited } = scoreMarks(ep);
    const messages = h("div", { class: "messages" });
    ep.messages.forEach((m, index) => {
      messages.append(messageBox(m, index, deciding, cited, texts, marksOf ? marksOf(index) : []));
    });
    return messages;
  }

  function revealDetail() {
    // The opened episode (#episode-detail) in view below the sticky filter bar, at any
    // width: beside the list on a wide window, under it on a narrow one (where it would
    // open out of sight). The bar sticks to the top once the page is scrolled to it.
    const bar = document.querySelector(".browser-bar");
    const stuck = bar.offsetHeight + 8;
    const top = document.getElementById("episode-detail").getBoundingClientRect().top;
    const covered = top < Math.max(stuck, bar.getBoundingClientRect().bottom);
    if (covered || top > stuck + 0.4 * (window.innerHeight - stuck)) window.scrollBy(0, top - stuck);
  }

  // The filter bar's two search boxes (sample id, words in the transcript), appended to
  // `form`; `changed` runs `wait` ms after the last keystroke in either.
  function searchBoxes(form, wait, changed) {
    const sample = h("input", { type: "search", id: "filter-search", placeholder: "sample id contains" });
    const words = h("input", { type: "search", id: "filter-text", placeholder: "words in the transcript" });
    let pause = null;
    for (const node of [sample, words]) {
      node.addEventListener("input", () => {
        clearTimeout(pause);
        pause = setTimeout(changed, wait);
      });
    }
    form.append(h("label", { class: "filter" }, h("span", { text: "sample" }), sample));
    form.append(h("label", { class: "filter" }, h("span", { text: "transcript" }), words));
    return { sample, words };
  }

  return { h, cssName, outcomeOf, chip, facts, episodeFacts, evidenceBox, marked, callBox, scoreMarks, transcript, revealDetail, searchBoxes };
})();
