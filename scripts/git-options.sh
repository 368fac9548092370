#!/bin/sh
# Regenerates src/policy/trusted/git/options.txt, the option tables of git's subcommands that
# trusted mode accepts (`KNOWN` in src/policy/trusted/git/tables.rs), from the git on PATH:
# `git <cmd> --help-all` and `git <cmd> <sub> --help-all` (parse-options' usage, hidden
# options included: every long option, its short letter, whether it takes a value, and
# `--[no-]` negations), `--git-completion-helper-all` (every long option parse-options
# completes, the diff options included, and their negations), and, for the commands whose
# options are not all parse-options' (the revision and diff options of log, diff and their
# family, the commands that print only a usage line, git's scripts), the option lines of
# their manual page (git-man). Run from the repository's root:
#     sh scripts/git-options.sh > src/policy/trusted/git/options.txt
set -eu
tables=src/policy/trusted/git/tables.rs
known=$(sed -n '/^pub const KNOWN/,/^];/p' "$tables" | grep -o '"[^"]*"' | tr -d '"')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git init -q "$work/repo"
cd "$work/repo"
man -w git-log >/dev/null 2>&1 || {
    echo "git-options.sh needs git's manual pages (git-man)" >&2
    exit 1
}
version=$(git --version | awk '{print $3}')
manversion=$(dpkg-query -W -f '${Version}' git-man 2>/dev/null | sed 's/^[0-9]*://; s/-.*//' || true)

# The sub-subcommands whose own `-h` lists their options (their union is the table).
subs() {
    case $1 in
    remote) echo add rename remove set-head set-branches get-url set-url show prune update ;;
    stash) echo list show drop pop apply branch push save clear create store ;;
    worktree) echo add list lock move prune remove repair unlock ;;
    notes) echo list add copy append edit show merge remove prune get-ref ;;
    sparse-checkout) echo init list set add reapply disable check-rules ;;
    commit-graph) echo verify write ;;
    multi-pack-index) echo write verify expire repack ;;
    bundle) echo create verify list-heads unbundle ;;
    reflog) echo show expire delete exists ;;
    refs) echo migrate verify ;;
    esac
}

# The manual pages whose option lines are added: revision and diff options, and the
# commands whose `-h` lists no options.
man_pages() {
    case $1 in
    log | show | whatchanged | shortlog | format-patch | rev-list | blame | annotate | \
        diff | diff-files | diff-index | diff-tree | range-diff | fast-export | rev-parse | \
        bisect | check-ref-format | fast-import | fetch-pack | get-tar-commit-id | \
        index-pack | mailsplit | pack-redundant | unpack-file | unpack-objects | var | \
        request-pull | show-index | update-server-info | version | mktag | rerere | \
        submodule) echo "$1" ;;
    esac
    case $1 in
    stash | reflog | shortlog | whatchanged) echo log ;;
    bundle | fast-export | blame | annotate) echo rev-list ;;
    range-diff) echo diff ;;
    esac
}

# Option lines of a manual page: the indented terms that start with a dash, each a list
# separated by ", ".
man_options() {
    MANWIDTH=400 man -P cat "git-$1" 2>/dev/null | grep -E '^ {7}-' | sed 's/^ *//' |
        tr ',' '\n' | sed 's/^ *//' | grep '^-' || true
}

# Options a manual page writes in a form the reading above does not take.
extra() {
    case $1 in
    bisect) printf '%s\n' '--term-new=<term>' '--term-bad=<term>' '--term-old=<term>' \
        '--term-good=<term>' ;;
    esac
    # The shortcuts of --diff-merges, and options newer than the manual pages.
    case $1 in
    log | show | whatchanged | diff-tree | rev-list | shortlog | stash | reflog)
        printf '%s\n' -m -c --cc --dd --remerge-diff --default-prefix ;;
    diff | diff-files | diff-index | range-diff)
        printf '%s\n' --cc --default-prefix ;;
    esac
    # git diff's own options, written in its manual page's synopsis or beside another term.
    case $1 in
    diff) printf '%s\n' --cached --staged --merge-base --no-index -0 -1 -2 -3 --base --ours \
        --theirs -c ;;
    diff-files) printf '%s\n' --base --ours --theirs ;;
    esac
}

for cmd in $known; do
    [ "$cmd" = send-email ] && continue
    sources="--help-all"
    {
        git "$cmd" -h 2>&1 </dev/null || true
        git "$cmd" --help-all 2>&1 </dev/null || true
        for sub in $(subs "$cmd"); do
            git "$cmd" "$sub" -h 2>&1 </dev/null || true
            git "$cmd" "$sub" --help-all 2>&1 </dev/null || true
        done
        if [ "$cmd" = submodule ]; then
            for sub in add status init deinit update set-branch set-url summary sync absorbgitdirs; do
                git submodule--helper "$sub" --help-all 2>&1 </dev/null || true
            done
        fi
    } >"$work/help"
    # The long options parse-options completes (the diff options of the diff and revision
    # family included), `=` after those that take a value.
    {
        git "$cmd" --git-completion-helper-all 2>/dev/null </dev/null || true
        for sub in $(subs "$cmd"); do
            git "$cmd" "$sub" --git-completion-helper-all 2>/dev/null </dev/null || true
        done
    } >"$work/complete"
    : >"$work/man"
    for page in $(man_pages "$cmd"); do
        man_options "$page" >>"$work/man"
        sources="$sources, git-$page(1) $manversion"
    done
    extra "$cmd" >>"$work/man"
    echo "[$cmd] git $version $sources"
    python3 - "$work/help" "$work/man" "$work/complete" <<'PY'
import re, sys

help_text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
man_text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
# (short, long) -> [arg, negatable]
table = {}

def add(short, long, arg, neg):
    key = (short or "-", long or "-")
    old = table.get(key)
    rank = {"no": 0, "opt": 1, "req": 2}
    if old is None:
        table[key] = [arg, neg]
    else:
        # Two sources disagreeing on the value: the weaker reading (an optional value is
        # only ever attached) keeps the next argument examined as an option.
        if rank[arg] < rank[old[0]]:
            old[0] = arg
        old[1] = old[1] or neg

def arg_of(rest):
    if rest.startswith("["):
        return "opt"
    # A value is written `<x>`, `(a|b)` or `[prefix]x`; a letter after one space starts the
    # help text of a long option name that fills its column.
    if rest.startswith("=") or re.match(r"^ [<(\[{]", rest):
        return "req"
    if rest.startswith("<") or rest.startswith("..."):
        return "opt"
    return "no"

# parse-options' usage: "    -x, --[no-]long <arg>   help".
for line in help_text.splitlines():
    m = re.match(r"^ {4}(-\S.*?)(?:  |$)", line)
    if not m:
        continue
    spec = m.group(1)
    if spec.startswith("-NUM"):
        for d in "0123456789":
            add(d, None, "no", False)
        continue
    short = None
    m2 = re.match(r"^-([^-\s,]), ?(.*)$", spec)
    if m2:
        short, spec = m2.group(1), m2.group(2)
    elif re.match(r"^-[^-]", spec):
        short, rest = spec[1], spec[2:]
        add(short, None, arg_of(rest), False)
        continue
    m3 = re.match(r"^--(\[no-\])?([A-Za-z0-9][A-Za-z0-9-]*)(.*)$", spec)
    if not m3:
        if short:
            add(short, None, arg_of(spec), False)
        continue
    neg, long, rest = bool(m3.group(1)), m3.group(2), m3.group(3)
    add(short, long, arg_of(rest), neg)

# Manual pages: "--name", "--name=<x>", "--name[=<x>]", "--[no-]name", "-x", "-x<v>",
# "-x[<v>]", "-<number>". A value written attached is read as optional (the stricter
# reading: the next argument stays an option to check).
for item in man_text.splitlines():
    word, _, after = item.partition(" ")
    # "--name <value>" and "-x <value>" take the next argument; any other text after the
    # term is prose.
    takes = re.match(r"^<[^ >]*>$", after.strip()) is not None
    if word.startswith("-<n") or word.startswith("-<num"):
        for d in "0123456789":
            add(d, None, "no", False)
        continue
    m = re.match(r"^--(\[no-\])?([A-Za-z0-9][A-Za-z0-9-]*)(.*)$", word)
    if m:
        neg, long, rest = bool(m.group(1)), m.group(2), m.group(3)
        add(None, long, "req" if takes else arg_of(rest) if rest else "no", neg)
        continue
    m = re.match(r"^-([A-Za-z0-9])(.*)$", word)
    if m:
        short, rest = m.group(1), m.group(2)
        arg = "req" if takes and not rest else "opt" if rest.startswith(("<", "[")) else "no"
        add(short, None, arg, False)

# Completion words: a long option the usage did not show is added, `=` says that an option
# takes a value, and `--no-X` marks X as negatable.
words = open(sys.argv[3], encoding="utf-8", errors="replace").read().split()
longs = {long: key for key in table for long in [key[1]] if long != "-"}
for word in words:
    name = word[2:].rstrip("=")
    if not word.startswith("--") or not name or name.startswith("no-"):
        continue
    if name not in longs:
        add(None, name, "req" if word.endswith("=") else "no", False)
        longs[name] = ("-", name)
    elif word.endswith("=") and table[longs[name]][0] == "no":
        # git itself says it takes a value, where the usage's `--path blob|tree` or
        # `--resolvemsg ...` did not (an optional value keeps its reading).
        table[longs[name]][0] = "req"
for word in words:
    name = word[2:].rstrip("=")
    if word.startswith("--no-") and name[3:] in longs:
        table[longs[name[3:]]][1] = True
    elif word.startswith("--no-") and name not in longs:
        add(None, name, "no", False)

for (short, long), (arg, neg) in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    letter = f"{short}:" if short != "-" else ""
    name = long if long != "-" else ""
    value = {"no": "", "req": "=", "opt": "?"}[arg]
    print(f"{letter}{name}{value}{'+' if neg else ''}")
PY
done
