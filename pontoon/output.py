"""Writing a command's output file: text, or a matplotlib figure; a path that cannot be
written is bad input (exit 2, one line)."""

from __future__ import annotations

from typing import Any

from pontoon.errors import InputError


def write_text(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None


def png_bytes(fig: Any) -> bytes:
    """``fig`` laid out as a PNG (for a page or a report), and closed."""
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.tight_layout()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    return buf.getvalue()


def save_figure(fig: Any, path: str, dpi: int = 100) -> None:
    """Save ``fig`` as ``path`` and close it."""
    import matplotlib.pyplot as plt

    try:
        fig.savefig(path, dpi=dpi)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None
    except ValueError as exc:  # a name whose ending no format has (.txt)
        raise InputError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
