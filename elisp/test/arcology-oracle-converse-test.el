;;; arcology-oracle-converse-test.el --- ERT tests for arcology-oracle-converse -*- lexical-binding: t -*-

;;; Commentary:

;; Against the real daemon, with the fixtures of arcology-oracle-test.el
;; (tests/elisp/test_elisp.py runs every ERT file): an answer that
;; arrives after another program saved the conversation's file, and
;; discarding an answer with the user's text typed under it.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'org)
(require 'arcology-oracle-converse)
(require 'arcology-oracle-test)

(ert-deftest arcology-oracle-converse-test-file-saved-elsewhere-meanwhile ()
  "An answer arriving after another program saved the file is not inserted.
Inserting into the unedited buffer asked, inside the answer's callback,
whether to edit a file changed on disk: no (or batch mode) lost the
answer, yes made the next save write over the other program's text.
The answer goes to the kill ring, and both texts stay as they are."
  (arcology-oracle-test--with-daemon
    (let* ((file (expand-file-name "converse-saved-elsewhere.org"
                                   (arcology-oracle-test--env "ARCOLOGY_ORACLE_TEST_ROAM")))
           (text "* Tomato questions\n** Me\nWhat causes blight on tomatoes?\n")
           (theirs (concat text "A line another editor saved.\n")))
      (with-temp-file file (insert text))
      (unwind-protect
          (let ((buffer (arcology-oracle-test--visit "converse-saved-elsewhere.org")))
            (goto-char (point-max))
            (arcology-oracle-converse)
            (with-temp-file file (insert theirs))
            (set-file-times file (time-add (current-time) 10))
            (arcology-oracle-test--capturing-messages messages
              (arcology-oracle-test--wait
               (lambda () (cl-find-if (lambda (m) (string-match-p "changed on disk.*kill ring" m)) messages))
               30 "the message about the kill ring"))
            (with-current-buffer buffer
              (should (equal (buffer-string) text))
              (should-not (buffer-modified-p)))
            (should (equal (with-temp-buffer (insert-file-contents file) (buffer-string)) theirs))
            (should (string-match-p (format "^[ \t]*:%s:" arcology-oracle-answer-property) (current-kill 0))))
        (delete-file file)))))

(ert-deftest arcology-oracle-converse-test-discard-keeps-text-typed-under-the-answer ()
  "Discard refuses an answer with the user's text after its Sources list.
Discard deleted the answer's whole subtree: a reply or note typed
under the answer, no heading of its own, went with it."
  (arcology-oracle-test--with-daemon
    (let* ((text "* Tomato questions\n** Me\nWhat causes blight on tomatoes?\n")
           (buffer (arcology-oracle-test--conversation text)))
      (arcology-oracle-converse)
      (arcology-oracle-test--wait (lambda () (arcology-oracle-test--answered-p buffer)) 30 "the answer")
      (with-current-buffer buffer
        (dolist (typed '("So: rotate the beds next year.\n" "- and water at the roots\n"))
          (goto-char (point-max))
          (insert typed)
          (let ((before (buffer-string)))
            (search-backward "Sources:")
            (should (string-match-p "has text after its Sources list"
                                    (cadr (should-error (arcology-oracle-discard) :type 'user-error))))
            (should (equal (buffer-string) before)))
          (delete-region (- (point-max) (length typed)) (point-max)))
        (search-backward "Sources:")
        (arcology-oracle-discard)
        (should (equal (buffer-string) text))))))

(provide 'arcology-oracle-converse-test)

;;; arcology-oracle-converse-test.el ends here
