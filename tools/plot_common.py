"""What tools/plot_experiment.py and tools/plot_experiment_ext.py share: a
CSV cell as a number, and saving a figure as a PNG without date or version
metadata (the same CSV gives the same file)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def num(r, k):
    return float(r[k])


def save(fig, png):
    fig.tight_layout()
    fig.savefig(png, dpi=110, metadata={"Software": None})
    plt.close(fig)
