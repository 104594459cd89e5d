// Several agents brainstorm the same question at once, each from a different angle; the
// author picks the ideas worth keeping.
({
  title: "Parallel brainstorm",
  description:
    "Asks several agents the same creative question at once, each pushed toward a different angle (the obvious-but-done-well, the surprising, the quiet, the dark, …), then lets the author pick the ideas to keep.",
  whenToUse:
    "When you need options rather than one answer: a twist, a chapter ending, a name, a motive. Cheap to run with a small model.",
  argsHint: [
    { name: "prompt", label: "The question to brainstorm", defaultValue: null },
    { name: "count", label: "How many agents (2 to 6)", defaultValue: 3 },
    { name: "profileKey", label: "Profile of the agents", defaultValue: "leader.default" },
    { name: "pick", label: "Ask the author to pick (true/false)", defaultValue: true },
  ],

  async run(wf, args) {
    const prompt = typeof args.prompt === "string" ? args.prompt.trim() : "";
    if (!prompt) throw new Error("args.prompt must say what to brainstorm");
    const angles = [
      "the most natural answer, done exceptionally well",
      "a surprising answer that still fits everything established",
      "a quiet, understated answer",
      "a darker answer with a real cost for the characters",
      "an answer that reuses something already set up in the story",
      "an answer that changes how an earlier scene reads",
    ];
    const count = Math.max(2, Math.min(angles.length, Number.isInteger(args.count) ? args.count : 3));
    const profileKey = typeof args.profileKey === "string" && args.profileKey ? args.profileKey : "leader.default";

    const ideas = await wf.map(
      angles.slice(0, count),
      async (angle, i) => {
        const s = await wf.agents.create(profileKey, { title: `Brainstorm ${i + 1}/${count}` });
        const r = await wf.agents.invoke(s, {
          message: `Brainstorm, do not change anything in the project. Question: ${prompt}\nAim for ${angle}. Answer with one idea: a short title on the first line, then at most 150 words.`,
        });
        wf.progress({ phase: "brainstorm", done: i + 1, total: count });
        const text = (r.result && r.result.message ? r.result.message : "").trim();
        return { angle, sessionId: s, status: r.status, title: text.split("\n")[0].slice(0, 80) || `(no answer from agent ${i + 1})`, text };
      },
      { concurrency: count }
    );

    if (args.pick === false) return { prompt, ideas };
    const options = ideas.map((idea, i) => ({ label: `${i + 1}. ${idea.title}`, description: idea.text.slice(0, 300) }));
    const picked = await wf.ask({
      kind: "select",
      title: "Which ideas are worth keeping?",
      description: prompt,
      options,
      multi: true,
    });
    const labels = Array.isArray(picked) ? picked : picked ? [picked] : [];
    const kept = ideas.filter((idea, i) => labels.includes(options[i].label));
    return { prompt, ideas, kept };
  },
})
