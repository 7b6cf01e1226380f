// The help pages, one per command, in the order `dlqctl --help` lists the commands.
#include "command_help.hpp"

namespace dlq::ctl {
namespace {

const CommandHelp kPages[] = {
    {"queues", "queues [--limit N] [--after Q]", "Every queue with its counts, by name.",
     "dlqctl queues --limit 50"},
    {"stats", "stats Q", "One queue's counts by status, and its oldest ages.", "dlqctl stats emails"},
    {"ls",
     "ls --queue Q [--status S | --retrying] [--order asc|desc] [--job-type T] [--error-class C]\n"
     "       [--limit N] [--offset N]\n"
     "ls --dead [--queue Q] [--job-type T] [--error-class C] [--dead-reason R] [--since T]\n"
     "       [--until T] [--incident FP] [--limit N] [--after ID]",
     "A queue's messages, oldest first (--order desc: newest first), with the total its stats\n"
     "count; or the dead letters across queues, oldest first.",
     "dlqctl ls --queue emails --retrying --error-class timeout"},
    {"show", "show Q ID", "One message, its payload masked as the server shows it to people.",
     "dlqctl show emails 42"},
    {"attempts", "attempts Q ID [--full] [--limit N --after N]",
     "A message's attempt history: each claim, failure (with its cause and the first 5 stack\n"
     "lines; --full: all), release and replay. Without --limit every page is fetched.",
     "dlqctl attempts emails 42 --full"},
    {"replay",
     "replay Q ID [--reason R] [--edit FILE|- [--not-json]] [--delay S] [--force]\n"
     "       [--resolve-effect KEY=done|forget ...] [--dry-run]\n"
     "replay --dead [FILTER] [--rate N] [--delay S] [--reason R] [--keep-order]\n"
     "       [--acknowledge-side-effects] [--no-follow] [--dry-run] [--yes]",
     "Replay one dead message, or every dead message a filter matches: preview, ask, start a\n"
     "replay run and follow it (Ctrl-C stops following, not the run). --resolve-effect decides\n"
     "about a side effect left started (attempts shows them): done skips it, forget reruns it.",
     "dlqctl replay --dead --incident 3f2a9c1d0b7e4f55 --reason \"smtp fixed\" --dry-run"},
    {"runs", "runs [--limit N] [--after ID]", "Replay runs, newest first.", "dlqctl runs"},
    {"run", "run ID [--follow]\nrun ID pause|resume|cancel",
     "Show a replay run, follow it until it is done, or pause, resume or cancel it.",
     "dlqctl run 4 --follow"},
    {"dismiss", "dismiss Q ID --reason R\ndismiss --dead [FILTER] --reason R [--dry-run] [--yes]",
     "Mark dead messages won't fix: they leave the dead-letter list, kept until retention.",
     "dlqctl dismiss emails 42 --reason \"customer deleted\""},
    {"incidents",
     "incidents [--queue Q] [--job-type T] [--error-class C] [--since T] [--until T]\n"
     "       [--sort dead|last_dead_at] [--limit N] [--cursor C]",
     "The causes of dead letters, most dead first.", "dlqctl incidents --since 2h"},
    {"incident", "incident FP", "One incident: its counts, sample error and alert state.",
     "dlqctl incident 3f2a9c1d0b7e4f55"},
    {"mute", "mute FP --until T [--reason R]",
     "No alerts for an incident until T (an age counts from now: --until 2h); --until now\n"
     "un-mutes.",
     "dlqctl mute 3f2a9c1d0b7e4f55 --until 2h --reason \"known outage\""},
    {"purge", "purge Q --status succeeded|dead|dismissed [--before T] [--yes]",
     "Delete a queue's messages in one status for good (asks first unless --yes).",
     "dlqctl purge emails --status succeeded --before 7d"},
    {"audit", "audit [--action A] [--actor N] [--queue Q] [--since T] [--until T] [--limit N]",
     "The audit log: who changed what, newest first.", "dlqctl audit --action batch_replay --since 1d"},
    {"enqueue",
     "enqueue Q PAYLOAD|- [--job-type T] [--idempotency-key K] [--delay S] [--priority P]\n"
     "       [--max-retries N]",
     "Add a message (- reads the payload from stdin).",
     "dlqctl enqueue emails '{\"to\":\"a@example.com\"}' --job-type send_email"},
    {"trial", "trial Q ID [--edit FILE|- [--not-json]] [--reason R] [--wait]",
     "A trial run: the dead message (it needs a job type) goes once to a worker whose handler\n"
     "takes trials, as it is or with an edited payload; the message does not change. --wait\n"
     "follows it and prints what it would have caused: exit 0 succeeded, 1 failed or expired.",
     "dlqctl trial payments 42 --edit fixed.json --reason \"does the fix work?\" --wait"},
    {"whoami", "whoami", "The token's name and roles, as the server sees them.", "dlqctl whoami"},
    {"health", "health [--ready]",
     "Whether dlqd answers (/healthz) or, with --ready, can use its database (/readyz).",
     "dlqctl health --ready"},
    {"hash-token", "hash-token", "Print the SHA-256 of the token on stdin, for auth.tokens.",
     "printf %s \"$TOKEN\" | dlqctl hash-token"},
};

}  // namespace

const CommandHelp* command_help(std::string_view command) {
  for (const auto& page : kPages) {
    if (command == page.command) return &page;
  }
  return nullptr;
}

}  // namespace dlq::ctl
