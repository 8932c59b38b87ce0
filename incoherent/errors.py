"""The error of unusable input: the one exception every layer raises for a file or option at fault."""


class InputError(Exception):
    """Unusable input or configuration: the CLI prints ``error: <message>`` on one line and exits 2.

    The message must name the file or option at fault.
    """
