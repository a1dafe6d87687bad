# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for dcpi's commands (dcpiprof, dcpicalc, dcpid, dcpidb, ...)
#
# Installed once as "dcpi" and linked under every command's name, where
# bash-completion loads it on first use.  Nothing here lists options: each
# command prints its own option table with the hidden --list-options
# (core/cli.h, cli_list_options), so the completion cannot drift from the
# commands.  Option values come from the table (choices, event names) or
# from the argument's name: DIR, FILE and PATH complete files, EPOCH and
# SET epoch numbers and labels of the database (-d, else $DCPI_DB, else
# ./dcpi.db), L a label, PROCEDURE and NAME the procedures sampled in the
# epoch (-E), GROUP groups; all database words come from
# `dcpidb complete`, which reads the database and never writes it.

declare -gA _dcpi_tables 2>/dev/null || true

# Prints the option table of command $1 (and verb $2), cached per command.
_dcpi_table()
{
	local key="$1${2:+ $2}" out
	if [[ -z ${_dcpi_tables[$key]+set} ]]; then
		out=$("$1" ${2:+"$2"} --list-options 2>/dev/null) || out=
		_dcpi_tables[$key]=$out
	fi
	printf '%s\n' "${_dcpi_tables[$key]}"
}

# The dcpidb next to the command being completed, else the one in PATH.
_dcpi_dcpidb()
{
	local dir=${1%/*}
	if [[ $1 == */* && -x $dir/dcpidb ]]; then
		printf '%s\n' "$dir/dcpidb"
	elif [[ $1 == */* && -x $dir/../tools/dcpidb ]]; then
		printf '%s\n' "$dir/../tools/dcpidb"
	else
		printf '%s\n' dcpidb
	fi
}

# Words from the database for kind epochs, labels or procedures.
_dcpi_db_words()
{
	local dcpidb
	dcpidb=$(_dcpi_dcpidb "$1")
	"$dcpidb" ${_dcpi_db:+-d "$_dcpi_db"} complete ${_dcpi_epoch:+-E "$_dcpi_epoch"} "$2" \
		2>/dev/null
}

# Completes cur as the value of an option or argument named arg (with values).
_dcpi_value()
{
	local cmd=$1 arg=$2 long=$3 values=$4 cur=$5 prefix=
	if [[ -z $values && $arg == *'|'* && $arg != *[A-Z]* ]]; then
		values=${arg//|/ }
	fi
	if [[ -n $values ]]; then
		# A comma-separated list (-e cycles,imiss): complete its last item.
		if [[ $arg == LIST && $cur == *,* ]]; then
			prefix=${cur%,*},
			cur=${cur##*,}
		fi
		COMPREPLY=($(compgen -P "$prefix" -W "$values" -- "$cur"))
		return
	fi
	case $long:$arg in
	*:DIR) COMPREPLY=($(compgen -d -- "$cur")) ;;
	*:FILE | *:PATH | *:IMAGE) COMPREPLY=($(compgen -f -- "$cur")) ;;
	*:EPOCH | *:SET | *:A,*) COMPREPLY=($(compgen -W "$(_dcpi_db_words "$cmd" epochs)" -- "$cur")) ;;
	--label:L) COMPREPLY=($(compgen -W "$(_dcpi_db_words "$cmd" labels)" -- "$cur")) ;;
	*:PROCEDURE | --procedure:NAME)
		COMPREPLY=($(compgen -W "$(_dcpi_db_words "$cmd" procedures)" -- "$cur")) ;;
	*:GROUP) COMPREPLY=($(compgen -g -- "$cur")) ;;
	*) COMPREPLY=() ;;
	esac
	if [[ $arg == DIR || $arg == FILE || $arg == PATH || $arg == IMAGE ]]; then
		compopt -o filenames 2>/dev/null
	fi
}

_dcpi_complete()
{
	local cur prev words cword split=false
	if declare -F _init_completion >/dev/null; then
		_init_completion -s -n : || return
	else
		words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
		if [[ $cur == --*=* ]]; then
			prev=${cur%%=*} cur=${cur#*=} split=true
		fi
	fi
	local cmd=${words[0]} table verb= line kind s l a v i w
	local -a verbs=() args=() optlist=() pos=()
	local -A takes=() argname=() vals=() longof=()
	local _dcpi_db=${DCPI_DB:-} _dcpi_epoch= stop=false

	table=$(_dcpi_table "$cmd")
	[[ -n $table ]] || return
	# The verb (dcpictl status, dcpidb prune): its own table, if it has one.
	while read -r kind s rest; do
		[[ $kind == argument && $s == [a-z]* ]] && verbs+=("$s")
	done <<<"$table"

	_dcpi_parse()
	{
		local kind s l a v
		while read -r kind s l a v; do
			case $kind in
			option)
				[[ $s != - ]] && optlist+=("$s")
				optlist+=("$l")
				if [[ $a != - ]]; then
					[[ $s != - ]] && takes[$s]=1 argname[$s]=$a vals[$s]=$v longof[$s]=$l
					takes[$l]=1 argname[$l]=$a vals[$l]=$v
				fi
				;;
			argument) [[ $s != [a-z]* ]] && args+=("$s${l:+ $l}") ;;
			flags) [[ $s == stop-at-arg ]] && stop=true ;;
			esac
		done <<<"$1"
	}
	_dcpi_parse "$table"

	# Walk the words before the cursor: options with their values, the verb,
	# the positional arguments; note -d and -E for database words.
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if [[ $stop == true && ${#pos[@]} -gt 0 ]]; then
			pos+=("$w")
		elif [[ $w == --* && $w == *=* ]]; then
			case ${w%%=*} in --db) _dcpi_db=${w#*=} ;; --epoch) _dcpi_epoch=${w#*=} ;; esac
		elif [[ $w == -* && -n ${takes[$w]+set} ]]; then
			case $w in -d | --db) _dcpi_db=${words[i+1]} ;; -E | --epoch) _dcpi_epoch=${words[i+1]} ;; esac
			((i++))
		elif [[ $w == -* ]]; then
			:
		elif [[ -z $verb && ${#verbs[@]} -gt 0 && ${#pos[@]} -eq 0 ]]; then
			verb=$w
			# dcpidb VERB has options of its own.
			local sub
			sub=$(_dcpi_table "$cmd" "$verb")
			[[ -n $sub && $sub != "$table" ]] && _dcpi_parse "$sub"
		else
			pos+=("$w")
		fi
	done
	[[ $cmd == dcpi-tui || $cmd == */dcpi-tui ]] && [[ -z $_dcpi_db && ${#pos[@]} -gt 0 ]] &&
		_dcpi_db=${pos[0]}

	# An option's value.
	if [[ $split == true || ( $prev == -* && -n ${takes[$prev]+set} ) ]]; then
		if [[ -n ${takes[$prev]+set} ]]; then
			_dcpi_value "$cmd" "${argname[$prev]}" "${longof[$prev]:-$prev}" "${vals[$prev]}" "$cur"
			return
		fi
	fi
	# dcpirun -- CMD ARGS: the command's own completion.
	if [[ $stop == true && ${#pos[@]} -gt 0 ]] || [[ $stop == true && $prev == -- ]]; then
		if declare -F _command_offset >/dev/null; then
			for ((i = 1; i < cword; i++)); do
				[[ ${words[i]} == -- ]] && { _command_offset $((i + 1)); return; }
			done
		fi
		COMPREPLY=($(compgen -c -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${optlist[*]}" -- "$cur"))
		return
	fi
	if [[ -z $verb && ${#verbs[@]} -gt 0 ]]; then
		COMPREPLY=($(compgen -W "${verbs[*]}" -- "$cur"))
		return
	fi
	# The n-th positional argument is the n-th listed (the last one repeats).
	local n=${#pos[@]}
	((${#args[@]})) || return
	((n >= ${#args[@]})) && n=$((${#args[@]} - 1))
	a=${args[n]}
	case $a in
	"CMD "*) COMPREPLY=($(compgen -c -- "$cur")) ;;
	*) _dcpi_value "$cmd" "${a%% *}" "" "" "$cur" ;;
	esac
}

_dcpi()
{
	_dcpi_complete "$@"
	# Options shared by a command and its verb, commands found twice in PATH.
	if ((${#COMPREPLY[@]} > 1)); then
		mapfile -t COMPREPLY < <(printf '%s\n' "${COMPREPLY[@]}" | awk '!seen[$0]++')
	fi
}

# Every dcpi command (filled in by the build from its list of programs).
complete -F _dcpi @DCPI_COMMANDS@
