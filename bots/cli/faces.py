"""`factbot faces`: the gallery of known public figures whose faces images are matched against.

Only people in this gallery are ever named in a reply; import labelled photos of public figures
only. Each photo must show the person's face clearly (a photo with several faces of similar
size is skipped: nobody could say which one the name is for).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from pipeline.image.faces import FaceReader
    from storage.faces import FaceGalleryRepo


@dataclass
class ImportReport:
    """What an import did: photos added, already kept, and skipped with their reasons."""

    added: int = 0
    kept: int = 0
    people: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


def import_gallery(
    directory: Path, *, reader: FaceReader, repo: FaceGalleryRepo, max_bytes: int
) -> ImportReport:
    """Import the labelled photos under directory into the gallery; skip (and say) bad ones."""
    from pipeline.errors import ImageError
    from pipeline.image.faces import gallery_face
    from pipeline.image.gallery import gallery_photos
    from pipeline.image.intake import ImageLimits, decode_image
    from pipeline.records.image import ImageOrigin, ImageSource

    report = ImportReport()
    limits = ImageLimits(max_bytes=max_bytes)
    for photo in gallery_photos(directory):
        ref = str(photo.path)
        try:
            data = photo.path.read_bytes()
        except OSError as exc:
            report.problems.append(f"{ref}: cannot be read ({exc.strerror or exc})")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if repo.has(photo.name, digest):
            report.kept += 1
            report.people.add(photo.name)
            continue
        source = ImageSource(ref=ref, origin=ImageOrigin.INLINE)
        try:
            image = decode_image(data, source=source, url=ref, limits=limits)
            face = gallery_face(image, reader=reader)
        except ImageError as exc:
            report.problems.append(f"{ref}: {exc.reason}")
            continue
        if repo.add(photo.name, face, source_file=ref, file_sha256=digest):
            report.added += 1
        else:
            report.kept += 1
        report.people.add(photo.name)
    return report


@click.group("faces")
def faces_group() -> None:
    """The gallery of public figures whose faces may be named in replies.

    \b
    Layout of DIR (several photos per person make matches sturdier):
      DIR/Barack Obama/1.jpg  DIR/Barack Obama/2.png   a folder per person, or
      DIR/Angela_Merkel.jpg   DIR/Angela_Merkel_2.jpg  files named after the person
    Examples:
      factbot faces import ~/gallery
      factbot faces list
      factbot faces remove "Barack Obama"
    """


@faces_group.command("import")
@click.argument(
    "directory", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="DIR"
)
@click.pass_context
def import_(ctx: click.Context, directory: Path) -> None:
    """Import labelled photos of public figures (a folder per person, or Name.jpg files)."""
    from bots.cli.context import app_from as _app

    app = _app(ctx)
    report = import_gallery(
        directory,
        reader=app.resources.face_reader(),
        repo=app.store.faces,
        max_bytes=app.settings.images.max_bytes,
    )
    for problem in report.problems:
        click.echo(f"skipped {problem}", err=True)
    click.echo(
        f"{directory}: {report.added} photos added, {report.kept} already in the gallery, "
        f"{len(report.problems)} skipped; {len(report.people)} people"
    )
    if not report.added and not report.kept:
        raise click.ClickException(f"no usable photo in {directory} (see the layout: --help)")


@faces_group.command("list")
@click.pass_context
def list_(ctx: click.Context) -> None:
    """List the people in the gallery and how many photos each has."""
    from bots.cli.context import app_from as _app

    people = _app(ctx).store.faces.people()
    for person in people:
        when = person.imported_at.strftime("%Y-%m-%d %H:%M") if person.imported_at else "?"
        click.echo(f"{person.name:40} {person.photos:4} photos   last imported {when}")
    click.echo(f"{len(people)} people, {sum(p.photos for p in people)} photos")


@faces_group.command("remove")
@click.argument("name")
@click.pass_context
def remove(ctx: click.Context, name: str) -> None:
    """Remove a person (every photo of NAME) from the gallery."""
    from bots.cli.context import app_from as _app

    removed = _app(ctx).store.faces.remove(name)
    if not removed:
        raise click.ClickException(f"{name!r} is not in the gallery (see `factbot faces list`)")
    click.echo(f"removed {name}: {removed} photos")
