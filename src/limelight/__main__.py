from limelight.cli import app

app()
