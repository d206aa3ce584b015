"""main.py serves the JupyterLab application under tests/lab on Debian's
jupyterlab_server: a LabServerApp whose page, bundle, schemas and themes come
from the webpack build (GOTRAIN_LAB_BUILD, default build/lab at the
repository root), with settings and workspaces in GOTRAIN_LAB_STATE (a
scratch directory the test makes), so no run sees another's state.

    python3 tests/lab/main.py --ServerApp.port=8888 ...
"""

import os

from jupyterlab_server import LabServerApp

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(
    os.environ.get("GOTRAIN_LAB_BUILD", os.path.join(HERE, "..", "..", "build", "lab"))
)
STATE = os.path.abspath(os.environ.get("GOTRAIN_LAB_STATE", os.path.join(BUILD, "state")))


class GotrainLab(LabServerApp):
    # The extension is named after this module, as jupyter_server looks it up.
    name = __name__
    app_name = "gotrain JupyterLab"
    app_version = "3.6.8"
    extension_url = "/lab"
    default_url = "/lab"
    load_other_extensions = False
    static_dir = BUILD
    templates_dir = os.path.join(HERE, "templates")
    schemas_dir = os.path.join(BUILD, "schemas")
    themes_dir = os.path.join(BUILD, "themes")
    app_settings_dir = os.path.join(BUILD, "application_settings")
    # Only this bundle: no prebuilt extensions from the system's paths.
    labextensions_path = []
    user_settings_dir = os.path.join(STATE, "user_settings")
    workspaces_dir = os.path.join(STATE, "workspaces")


def _jupyter_server_extension_points():
    # jupyter_server finds the application through its module.
    return [{"module": __name__, "app": GotrainLab}]


if __name__ == "__main__":
    GotrainLab.launch_instance()
