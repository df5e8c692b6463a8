#!/bin/sh
# examples.sh DIR - runs the programs of examples/ (built in DIR) for a few
# steps: each exits 0 and prints one finite loss a step; the first loss is
# near log(classes) (an untrained model guesses uniformly), the mean of the
# last three is below the mean of the first three by LOSS_DROP, and the
# MLP gives the same losses on cpu and lazy. The GPT ends with its
# sample: the 64 prompt characters and 200 more. Fashion-MNIST comes from
# the Debian package dataset-fashion-mnist; the GPT reads its default text.
set -u
dir="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME CLASSES LOSS_DROP PROGRAM ARGS...: runs it and checks its losses
# (CLASSES "vocabulary": the number the program prints as "vocabulary N")
run() {
    name="$1"; classes="$2"; drop="$3"; shift 3
    "$@" --log-every 1 >"$tmp/$name" 2>&1
    code=$?
    steps=$(grep -c '^step [0-9]*  loss ' "$tmp/$name")
    verdict=$(awk -v classes="$classes" -v drop="$drop" '
        classes == "vocabulary" && / vocabulary [0-9]+$/ { classes = $NF }
        /^step [0-9]+  loss / {
            if ($4 !~ /^[0-9]+\.[0-9]+$/) { print "loss not finite: " $0; bad = 1 }
            loss[n++] = $4
        }
        END {
            if (bad) exit
            if (n < 6) { print "fewer than 6 losses"; exit }
            if ((loss[0] - log(classes))^2 > 0.25)
                { printf "first loss %s not within 0.5 of log(%d) = %.3f\n", loss[0], classes, log(classes); exit }
            first = (loss[0] + loss[1] + loss[2]) / 3; last = (loss[n-3] + loss[n-2] + loss[n-1]) / 3
            if (last > first - drop) { printf "losses fall from %.4f to %.4f only (want %s less)\n", first, last, drop; exit }
            printf "ok %.4f -> %.4f", first, last
        }' "$tmp/$name")
    case "$code:$verdict" in
    0:ok*) echo "ok: $name: exit 0, $steps finite losses, mean of the first and last three ${verdict#ok }" ;;
    *) echo "FAIL: $name: exit $code, $verdict; output:"; cat "$tmp/$name"; fail=1 ;;
    esac
}

# bad command lines and missing inputs: a message and a non-zero exit
# expect CODE PATTERN PROGRAM ARGS...
expect() {
    want="$1"; pattern="$2"; shift 2
    "$@" >"$tmp/out" 2>&1
    code=$?
    if [ "$code" -eq "$want" ] && grep -q -- "$pattern" "$tmp/out"; then
        echo "ok: ${1##*/} ${2:-} ${3:-} -> exit $code"
    else
        echo "FAIL: $* -> exit $code (want $want and a line matching $pattern):"; cat "$tmp/out"; fail=1
    fi
}
expect 2 "usage: .*--device cpu|lazy" "$dir/mlp" --device gpu
expect 2 "usage: .*--text PATH" "$dir/gpt" --steps 0
expect 2 "usage:" "$dir/mnist_cnn" --steps
expect 1 "dataset-fashion-mnist" "$dir/mnist_cnn" --data /usr/share/datasets/fashion-mnist/missing
expect 1 "cannot read a text of more than 64 bytes from /no/such/file" "$dir/gpt" --text /no/such/file

run mlp_lazy 10 0.5 "$dir/mlp" --device lazy --steps 30
run mlp_cpu 10 0.5 "$dir/mlp" --device cpu --steps 30
if grep '^step' "$tmp/mlp_lazy" | awk '{ print $4 }' >"$tmp/a" && grep '^step' "$tmp/mlp_cpu" | awk '{ print $4 }' >"$tmp/b" &&
   paste "$tmp/a" "$tmp/b" | awk '{ d = $1 - $2; if (d * d > 1e-6) bad = 1 } END { exit bad || NR != 30 }'; then
    echo "ok: the MLP's 30 losses agree on cpu and lazy (to 1e-3)"
else
    echo "FAIL: the MLP's losses differ between cpu and lazy:"; paste "$tmp/a" "$tmp/b"; fail=1
fi
run mnist_cnn_lazy 10 0.4 "$dir/mnist_cnn" --device lazy --steps 12

run gpt_lazy vocabulary 0.5 "$dir/gpt" --device lazy --steps 25
# the sample: what follows the last loss is 64 + 200 characters and a newline
sample_bytes=$(sed '1,/^step 25  loss/d' "$tmp/gpt_lazy" | wc -c)
if [ "$sample_bytes" -eq 265 ] && sed '1,/^step 25  loss/d' "$tmp/gpt_lazy" | grep -q "GNU GENERAL PUBLIC LICENSE"; then
    echo "ok: the GPT's sample continues the text's first 64 characters with 200 more"
else
    echo "FAIL: the GPT's sample has $sample_bytes bytes (want 265, starting with the text):"; cat "$tmp/gpt_lazy"; fail=1
fi
exit $fail
