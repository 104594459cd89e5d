// Check a chapter against the world timeline: the world keeper reads each part of the chapter
// and compares every concrete fact (who is where, alive, wounded, carrying what, at what time)
// with the world state, then reports the contradictions. Long chapters are split into parts
// audited in parallel. Read-only: nothing is changed, the issues are returned.
({
  title: "Consistency audit of a chapter against the world",
  description:
    "Splits a chapter file into parts and has world-keeper agents check each part, in parallel, against the world timeline (execute_world, read-only use): locations, states, possessions, injuries, relationships and timing. Returns the contradictions found, with the passage, the world fact and a suggested fix.",
  whenToUse:
    "After drafting or revising a chapter, before accepting it; or when the author suspects the prose and the world timeline disagree. Changes nothing.",
  argsHint: [
    { name: "path", label: "Chapter file, project-relative (.md)", defaultValue: null },
    { name: "at", label: "World time the chapter starts at (optional, in the project calendar)", defaultValue: null },
    { name: "focus", label: "What to look at especially (optional)", defaultValue: "" },
    { name: "partChars", label: "Characters per part (long chapters are split)", defaultValue: 12000 },
    { name: "concurrency", label: "Parts audited at once", defaultValue: 3 },
  ],
  phases: [
    { key: "read", title: "Read the chapter" },
    { key: "audit", title: "Audit against the world" },
  ],

  async run(wf, args) {
    const path = typeof args.path === "string" ? args.path.trim() : "";
    if (!path) throw new Error("args.path must be the chapter's file, e.g. manuscript/001-volume/003-chapter/index.md");
    const partChars = Number.isInteger(args.partChars) && args.partChars >= 2000 ? args.partChars : 12000;
    const concurrency = Number.isInteger(args.concurrency) && args.concurrency >= 1 ? Math.min(args.concurrency, 6) : 3;

    wf.progress({ phase: "read", done: 0, total: 1 });
    const text = await wf.workspace.read(path);
    // Split on paragraph boundaries so no sentence is cut in two.
    const parts = [];
    let current = "";
    for (const para of text.split(/\n\s*\n/)) {
      if (current && current.length + para.length > partChars) {
        parts.push(current);
        current = "";
      }
      current += (current ? "\n\n" : "") + para;
    }
    if (current.trim()) parts.push(current);
    if (parts.length === 0) return { path, parts: 0, issues: [], note: "the chapter is empty" };
    wf.log(`${path}: ${text.length} characters in ${parts.length} part(s)`);

    const parse = (r) => {
      const data = r.result && r.result.data;
      const candidates = [];
      if (data && Array.isArray(data.issues)) return { issues: data.issues };
      if (data && typeof data.result === "string") candidates.push(data.result);
      if (r.result && typeof r.result.message === "string") candidates.push(r.result.message);
      for (const c of candidates) {
        const start = c.indexOf("{");
        const end = c.lastIndexOf("}");
        if (start < 0 || end <= start) continue;
        try {
          const v = JSON.parse(c.slice(start, end + 1));
          if (v && Array.isArray(v.issues)) return { issues: v.issues };
        } catch (e) {
          // not JSON; try the next candidate
        }
      }
      return { issues: [], unparsed: candidates[0] || "" };
    };

    let done = 0;
    const results = await wf.map(
      parts,
      async (part, i) => {
        const keeper = await wf.agents.create("world.engine", {
          title: `Audit ${path} · part ${i + 1}/${parts.length}`,
        });
        const message = [
          `Audit part ${i + 1} of ${parts.length} of the chapter ${path} against the world timeline. Read only: do not write slices or files.`,
          args.at ? `The chapter starts at world time ${args.at}.` : "Work out from the text and the timeline when the part takes place.",
          args.focus ? `Pay special attention to: ${args.focus}` : "",
          "Use execute_world to read the state of every character, place and item the part mentions at that time, and compare it with what the prose says: where people are, who is alive or hurt, who carries or owns what, what they know, and how much time passes.",
          'Reply with JSON only: {"issues": [{"severity": "error" | "warning", "quote": "the passage", "problem": "what disagrees", "worldFact": "what the world records", "suggestion": "how to fix the prose or the world"}]}. An empty list means the part is consistent.',
          "",
          "--- part text ---",
          part,
        ]
          .filter((l) => l !== null)
          .join("\n");
        const r = await wf.agents.invoke(keeper, { message });
        wf.progress({ phase: "audit", done: ++done, total: parts.length });
        if (r.status !== "completed") {
          return { part: i + 1, issues: [], error: r.error || `status ${r.status}` };
        }
        const parsed = parse(r);
        return Object.assign({ part: i + 1 }, parsed);
      },
      { concurrency }
    );

    const issues = [];
    for (const r of results) for (const issue of r.issues) issues.push(Object.assign({ part: r.part }, issue));
    const failed = results.filter((r) => r.error).map((r) => ({ part: r.part, error: r.error }));
    const unparsed = results.filter((r) => r.unparsed).map((r) => ({ part: r.part, text: r.unparsed }));
    wf.log(`${issues.length} issue(s) found`);
    return { path, parts: parts.length, issues, failedParts: failed, unparsedReplies: unparsed };
  },
})
