# bash completion for dlcomm: commands, options, the values of an option
# that has a list of them (--backend, -c, -d, ...), -p and --system.
# Everything is asked of dlcomm itself
# (dlcomm __complete ...), so it follows the program's own option tables
# and the user's $DLCOMM_PROFILES / $DLCOMM_SYSTEMS folders.
_dlcomm()
{
    local cur prev cmd i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog=${COMP_WORDS[0]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$("$prog" __complete commands 2>/dev/null)" -- "$cur")
        return
    fi
    case $prev in
        -p|--profiles)
            # a comma-separated list: complete its last element
            local head=${cur%,*} last=${cur##*,}
            [[ $head == "$cur" ]] && head="" || head="$head,"
            mapfile -t COMPREPLY < <(compgen -P "$head" -W "$("$prog" __complete profiles 2>/dev/null)" -- "$last")
            compopt -o nospace 2>/dev/null
            return ;;
        --system)
            mapfile -t COMPREPLY < <(compgen -W "$("$prog" __complete systems 2>/dev/null)" -- "$cur")
            return ;;
        --out|--json|--prometheus|--baseline|--matrix)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return ;;
    esac
    if [[ $prev == -* ]]; then
        # an option with a list of values: complete the last of a comma list
        local values head=${cur%,*} last=${cur##*,}
        values=$("$prog" __complete values "$cmd" "$prev" 2>/dev/null)
        if [[ -n $values ]]; then
            [[ $head == "$cur" ]] && head="" || head="$head,"
            mapfile -t COMPREPLY < <(compgen -P "$head" -W "$values" -- "$last")
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$("$prog" __complete options "$cmd" 2>/dev/null)" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}
complete -F _dlcomm dlcomm
