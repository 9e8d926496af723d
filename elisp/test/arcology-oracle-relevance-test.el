;;; arcology-oracle-relevance-test.el --- ERT tests of the number a list shows -*- lexical-binding: t -*-

;;; Commentary:

;; A list shows each result's `relevance' (the daemon's score made to
;; agree with the list's order), the pair's own `score' on its help,
;; and marks weak what is shown weak.  Pure tests: no daemon.

;;; Code:

(require 'ert)
(require 'arcology-oracle)
(require 'arcology-oracle-results)

(ert-deftest arcology-oracle-relevance-test-shown-not-score ()
  "The relevance is shown; the score is on its help when it differs."
  (let ((text (arcology-oracle--score-text '((score . 0.05) (relevance . 0.045)))))
    (should (equal (substring-no-properties text) "0.04"))
    (should (string-match-p "pair alone 0\\.050" (get-text-property 0 'help-echo text))))
  (let ((same (arcology-oracle--score-text '((score . 0.3) (relevance . 0.3)))))
    (should (equal (substring-no-properties same) "0.30"))
    (should-not (get-text-property 0 'help-echo same))))

(ert-deftest arcology-oracle-relevance-test-older-daemon-and-none ()
  "A daemon without `relevance' has its score shown; nothing shows blanks."
  (should (equal (substring-no-properties (arcology-oracle--score-text '((score . 0.12)))) "0.12"))
  (should (equal (substring-no-properties (arcology-oracle--score-text '((relevance)))) "    ")))

(ert-deftest arcology-oracle-relevance-test-weak-by-what-is-shown ()
  "Weak is read on the number shown, so the weak ones end the list."
  (let ((arcology-oracle-weak-score 0.1))
    (should (arcology-oracle--weak-p '((score . 0.12) (relevance . 0.08))))
    (should-not (arcology-oracle--weak-p '((score . 0.08) (relevance . 0.11))))))

(provide 'arcology-oracle-relevance-test)

;;; arcology-oracle-relevance-test.el ends here
