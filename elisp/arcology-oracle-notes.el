;;; arcology-oracle-notes.el --- Headings, roam directory and visiting notes for arcology-oracle -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
;; URL: https://github.com/arcology-oracle/arcology-oracle

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; The notes as the other parts see them, as one feature: this file
;; loads the parts that each hold one job of it, which the similar
;; notes, the ask commands, the links and the memory share:
;;
;; - arcology-oracle-privacy.el: which text is private;
;; - arcology-oracle-roam-dir.el: the daemon's roam directory here;
;; - arcology-oracle-context.el: the note and heading at point;
;; - arcology-oracle-results.el: a result as the lists show it;
;; - arcology-oracle-listed-note.el: the note a list is about;
;; - arcology-oracle-windows.el: where the buffers are shown;
;; - arcology-oracle-visit.el: visiting results and cited sources.

;;; Code:

(require 'arcology-oracle-privacy)
(require 'arcology-oracle-roam-dir)
(require 'arcology-oracle-context)
(require 'arcology-oracle-results)
(require 'arcology-oracle-listed-note)
(require 'arcology-oracle-windows)
(require 'arcology-oracle-visit)

(provide 'arcology-oracle-notes)

;;; arcology-oracle-notes.el ends here
