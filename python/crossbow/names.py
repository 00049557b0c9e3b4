"""The did-you-mean hint of every error about an unknown name (a net, an option, a blob)."""
import difflib


def did_you_mean(name, known):
    """"; did you mean 'x'?" for the known name closest to `name`, or "" where none is close."""
    near = difflib.get_close_matches(str(name), list(known), n=1)
    return f"; did you mean '{near[0]}'?" if near else ""
