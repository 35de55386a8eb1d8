#!/usr/bin/env python3
"""Rebuilds KUMO instance lines (truths, actions) from KUMO's knowledge books,
for `kumo-gen check-books` on a KUMO env directory whose instance file is not
at hand (MedicalINDEnv's is a Git LFS pointer). Dev-time aid only.

Usage: scripts/kumo-book-instances.py KUMO_DATA_FILE.py ENV_DIR
  ENV_DIR holds knowledge_book/<setting>/seed=<i>.txt; writes
  ENV_DIR/<setting>.jsonl. Then:
  kumo-gen check-books ENV_DIR --domain medical-ind --format kumo

A book's instance is the domain's actions named in it and the truths named
in it outside action names (falling back to heading and numbered lines when
prose names extra truths); books where the counts differ from the setting
are skipped. Observations and the valid truth are placeholders: the book
check reads only truths and actions. A truth the book never names cannot be
found, so the check on rebuilt instances is a lower bound on failures.
"""
import sys, os, re, json, glob
src, root = sys.argv[1:3]
ns = {}; exec(open(src).read(), ns)
keys = [k for k in ns if not k.startswith('__')]
T, A, O = ns[keys[0]], ns[keys[1]], ns[keys[2]]
def find(text, name):
    return re.search(r'(?<![\w])' + re.escape(name.lower()) + r'(?![\w])', text) is not None
for setting_dir in sorted(glob.glob(os.path.join(root, 'knowledge_book', '*'))):
    setting = os.path.basename(setting_dir)
    nt, na = [int(x) for x in re.findall(r'truth_num=(\d+)\+action_num=(\d+)', setting)[0]]
    out = []
    for path in sorted(glob.glob(os.path.join(setting_dir, 'seed=*.txt')), key=lambda p: int(p.split('=')[-1][:-4])):
        seed = int(path.split('=')[-1][:-4])
        text = open(path).read().lower()
        acts = [a for a in A if find(text, a)]
        masked = text
        for a in sorted(acts, key=len, reverse=True):
            masked = masked.replace(a.lower(), ' ')
        truths = [t for t in T if find(masked, t)]
        if len(truths) != nt:
            # Prefer names in heading or numbered lines (the disease list).
            heads = '\n'.join(l for l in masked.splitlines() if re.match(r'\s*(#+|\d+\.)', l))
            truths = [t for t in T if find(heads, t)]
        if len(truths) != nt or len(acts) != na:
            print(f'{setting} seed={seed}: found {len(truths)} truths, {len(acts)} actions; skipped', file=sys.stderr)
            continue
        obs = {}
        for a in acts:
            k = next(iter(O[a]['states']))
            obs[a] = (k[0] + k[1]) / 2 if isinstance(k, tuple) else str(k)
        out.append(json.dumps({'truths': truths, 'actions': acts, 'observations': obs, 'seed': seed, 'valid_truth': truths[0]}))
    open(os.path.join(root, setting + '.jsonl'), 'w').write('\n'.join(out) + '\n')
    print(setting, len(out), 'instances')
